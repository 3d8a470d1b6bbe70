// scripts/style.sh: the style check CI runs fails on a file clang-format
// would change, naming it and showing the change; it passes a formatted
// file, and the fix mode leaves a file the check accepts.
#include "build_paths.h"
#include "child_process.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using nccom_test::ChildResult;
using nccom_test::run_child;
using nccom_test::TempDir;

ChildResult style(const std::vector<std::string>& args) {
  std::vector<std::string> argv{nccom_test::in_source("scripts/style.sh")};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_child("/bin/bash", argv, {});
}

std::string write(const TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.path() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string output(const ChildResult& r) { return "stdout:\n" + r.out + "\nstderr:\n" + r.err; }

constexpr const char* kFormatted = "int answer(int* x) { return *x; }\n";
constexpr const char* kUnformatted = "int  answer( int *x ){return *x;}\n";

TEST(ScriptsStyle, AFormattedFilePasses) {
  TempDir dir;
  const auto r = style({"--check", write(dir, "ok.cc", kFormatted)});
  EXPECT_EQ(r.exit_code, 0) << output(r);
  EXPECT_NE(r.out.find("1 files formatted"), std::string::npos) << output(r);
}

TEST(ScriptsStyle, AnUnformattedFileFailsNamingItAndItsChange) {
  TempDir dir;
  const auto ok = write(dir, "ok.cc", kFormatted);
  const auto bad = write(dir, "bad.cc", kUnformatted);
  const auto r = style({"--check", ok, bad});
  EXPECT_EQ(r.exit_code, 1) << output(r);
  EXPECT_NE(r.out.find(bad + " is not formatted"), std::string::npos) << output(r);
  EXPECT_EQ(r.out.find(ok + " is not formatted"), std::string::npos) << output(r);
  EXPECT_NE(r.out.find("+int answer(int* x) { return *x; }"), std::string::npos) << output(r);
  EXPECT_NE(r.err.find("1 of 2 files need formatting; run: bash scripts/style.sh"),
            std::string::npos)
      << output(r);
  EXPECT_EQ(read(bad), kUnformatted) << "--check changed the file";
}

TEST(ScriptsStyle, TheFixModeWritesWhatTheCheckAccepts) {
  TempDir dir;
  const auto bad = write(dir, "bad.cc", kUnformatted);
  const auto fix = style({bad});
  ASSERT_EQ(fix.exit_code, 0) << output(fix);
  EXPECT_EQ(read(bad), kFormatted);
  const auto r = style({"--check", bad});
  EXPECT_EQ(r.exit_code, 0) << output(r);
}

TEST(ScriptsStyle, AFileThatCannotBeReadIsAnError) {
  TempDir dir;
  const auto r = style({"--check", dir.path() + "/missing.cc"});
  EXPECT_EQ(r.exit_code, 2) << output(r);
  EXPECT_NE(r.err.find("cannot read " + dir.path() + "/missing.cc"), std::string::npos)
      << output(r);
}

// clang-format would rewrite a CMake file as C (comments and ${} mangled):
// a named file that is not C or C++ is refused before anything is touched.
TEST(ScriptsStyle, ANamedFileThatIsNotCOrCppIsRefusedAndNothingChanges) {
  TempDir dir;
  const auto bad = write(dir, "bad.cc", kUnformatted);
  const std::string cmake_text = "# a comment\nset(via_${root} \"${root}\")\n";
  const auto cmake = write(dir, "Rules.cmake", cmake_text);
  const auto r = style({bad, cmake});
  EXPECT_EQ(r.exit_code, 2) << output(r);
  EXPECT_NE(r.err.find(cmake + " is not a C or C++ file"), std::string::npos) << output(r);
  EXPECT_EQ(read(cmake), cmake_text);
  EXPECT_EQ(read(bad), kUnformatted) << "a file was formatted before the refusal";
}

// The frozen net ABI headers stay as released even when named.
TEST(ScriptsStyle, AFrozenHeaderNamedExplicitlyIsLeftAlone) {
  const std::string header = nccom_test::in_source("sdk/include/nccom/net_v4.h");
  const std::string before = read(header);
  const auto r = style({"--check", header});
  EXPECT_EQ(r.exit_code, 0) << output(r);
  EXPECT_NE(r.out.find("sdk/include/nccom/net_v4.h is a frozen ABI header"), std::string::npos)
      << output(r);
  EXPECT_EQ(read(header), before);
}

}  // namespace
