// scripts/lint.sh: the lint CI runs, on a made-up tree that carries the
// repository's own .clang-tidy files. A name against the rules fails with
// file:line:col and the rule; a clean source passes; a folder whose
// .clang-tidy keeps NCCL's camelBack spelling is held to that spelling, not
// exempted from naming; the C ABI headers' folder has no naming rule. A clean
// source is not linted again until something that decides its result
// changes, in this clone or in another one; a finding is never cached.
#include "build_paths.h"
#include "child_process.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using nccom_test::ChildResult;
using nccom_test::run_child;
using nccom_test::TempDir;

std::string output(const ChildResult& r) { return "stdout:\n" + r.out + "\nstderr:\n" + r.err; }

// <tmp>/scripts/lint.sh, the repository's .clang-tidy at the root and in
// host/rings and sdk/include/nccom, and a compile database of `sources`.
class ScriptsLint : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = dir_.path();
    for (const char* d : {"scripts", "build", "host/rings", "sdk/include/nccom"})
      fs::create_directories(root_ + "/" + d);
    for (const char* f : {"scripts/lint.sh", "scripts/lint-cache.py", ".clang-tidy",
                          "host/rings/.clang-tidy", "sdk/include/nccom/.clang-tidy"})
      fs::copy_file(std::string(NCCOM_SOURCE_DIR) + "/" + f, root_ + "/" + f);
    cache_ = cache_dir_.path() + "/lint";
  }

  void write(const std::string& name, const std::string& text) {
    std::ofstream(root_ + "/" + name) << text;
  }

  ChildResult lint(const std::vector<std::string>& sources) {
    std::string db = "[\n";
    for (std::size_t i = 0; i < sources.size(); ++i) {
      const std::string file = root_ + "/" + sources[i];
      db += std::string(i ? ",\n" : "") + "{\n  \"directory\": \"" + root_ + "\",\n" +
            "  \"command\": \"c++ -std=c++20 -I" + root_ + "/sdk/include -c " + file + "\",\n" +
            "  \"file\": \"" + file + "\"\n}";
    }
    write("build/compile_commands.json", db + "\n]\n");
    return run_child("/bin/bash", {root_ + "/scripts/lint.sh"}, {{"NCCOM_LINT_CACHE", cache_}});
  }

  TempDir dir_;
  TempDir cache_dir_;
  std::string root_;
  std::string cache_;
};

TEST_F(ScriptsLint, ACleanSourcePasses) {
  write("host/ok.cc",
        "namespace nccom {\nconstexpr int kLimit = 4;\nint twice(int n_ranks) { return 2 * n_ranks "
        "+ kLimit; }\n}  // namespace nccom\n");
  const auto r = lint({"host/ok.cc"});
  EXPECT_EQ(r.exit_code, 0) << output(r);
  EXPECT_NE(r.out.find("lint: 1 sources clean"), std::string::npos) << output(r);
}

TEST_F(ScriptsLint, ANameAgainstTheRulesFailsNamingThePlace) {
  write("host/bad.cc", "namespace nccom {\nint ComputeTotal(int nRanks) { return nRanks; }\n}\n");
  const auto r = lint({"host/bad.cc"});
  EXPECT_EQ(r.exit_code, 1) << output(r);
  EXPECT_NE(r.out.find("host/bad.cc:2:5: error: invalid case style for function 'ComputeTotal'"),
            std::string::npos)
      << output(r);
  EXPECT_NE(r.out.find("invalid case style for parameter 'nRanks'"), std::string::npos)
      << output(r);
  EXPECT_NE(r.err.find("lint: 2 finding(s) in 1 sources"), std::string::npos) << output(r);
}

TEST_F(ScriptsLint, TheCamelBackFoldersAreHeldToCamelBack) {
  write("host/rings/ok.cc", "int computePaths(int nChannels) { return nChannels; }\n");
  write("host/rings/bad.cc", "int compute_paths(int n_channels) { return n_channels; }\n");
  const auto ok = lint({"host/rings/ok.cc"});
  EXPECT_EQ(ok.exit_code, 0) << output(ok);
  const auto bad = lint({"host/rings/bad.cc"});
  EXPECT_EQ(bad.exit_code, 1) << output(bad);
  EXPECT_NE(bad.out.find("host/rings/bad.cc:1:5: error: invalid case style for function "
                         "'compute_paths'"),
            std::string::npos)
      << output(bad);
}

TEST_F(ScriptsLint, TheAbiHeadersKeepTheirSpellingAndBugsAreStillFound) {
  // An NCCL-spelled C struct in the SDK's header folder is not a finding;
  // a use after move in the source that includes it is.
  write("sdk/include/nccom/abi.h",
        "typedef struct ncclThing_v6 { int sendComm; } ncclThing_v6_t;\n");
  write("host/use.cc",
        "#include <nccom/abi.h>\n#include <string>\n#include <utility>\n"
        "int use(ncclThing_v6_t t) {\n  std::string a = \"x\";\n  std::string b = std::move(a);\n"
        "  return t.sendComm + static_cast<int>(a.size() + b.size());\n}\n");
  const auto r = lint({"host/use.cc"});
  EXPECT_EQ(r.exit_code, 1) << output(r);
  EXPECT_EQ(r.out.find("abi.h"), std::string::npos) << output(r);
  EXPECT_NE(r.out.find("host/use.cc:7:"), std::string::npos) << output(r);
  EXPECT_NE(r.out.find("bugprone-use-after-move"), std::string::npos) << output(r);
}

TEST_F(ScriptsLint, AnUnchangedCleanSourceIsNotLintedAgain) {
  write("host/ok.cc",
        "namespace nccom {\nint twice(int n) { return 2 * n; }\n}  // namespace nccom\n");
  const auto first = lint({"host/ok.cc"});
  ASSERT_EQ(first.exit_code, 0) << output(first);
  EXPECT_NE(first.out.find("(0 of them unchanged"), std::string::npos) << output(first);
  const auto second = lint({"host/ok.cc"});
  ASSERT_EQ(second.exit_code, 0) << output(second);
  EXPECT_NE(second.out.find("(1 of them unchanged"), std::string::npos) << output(second);
}

TEST_F(ScriptsLint, AChangedSourceHeaderOrRuleIsLintedAgain) {
  write("sdk/include/nccom/limits.h", "#pragma once\nconstexpr int kLimit = 4;\n");
  write("host/ok.cc",
        "#include <nccom/limits.h>\nnamespace nccom {\nint cap(int n) { return n < kLimit ? n : "
        "kLimit; }\n}  // namespace nccom\n");
  ASSERT_EQ(lint({"host/ok.cc"}).exit_code, 0);
  // The header the source includes changed: the source is linted again.
  write("sdk/include/nccom/limits.h", "#pragma once\nconstexpr int kLimit = 5;\n");
  const auto header = lint({"host/ok.cc"});
  EXPECT_NE(header.out.find("(0 of them unchanged"), std::string::npos) << output(header);
  std::ofstream(root_ + "/host/rings/.clang-tidy", std::ios::app) << "\n";
  const auto rule = lint({"host/ok.cc"});
  EXPECT_NE(rule.out.find("(0 of them unchanged"), std::string::npos) << output(rule);
}

TEST_F(ScriptsLint, AFindingIsReportedEveryTime) {
  write("host/bad.cc", "namespace nccom {\nint ComputeTotal(int n) { return n; }\n}\n");
  for (int run = 0; run < 2; ++run) {
    const auto r = lint({"host/bad.cc"});
    EXPECT_EQ(r.exit_code, 1) << "run " << run << "\n" << output(r);
    EXPECT_NE(r.out.find("invalid case style for function 'ComputeTotal'"), std::string::npos)
        << "run " << run << "\n"
        << output(r);
  }
}

TEST_F(ScriptsLint, AnotherCloneOfTheSameTreeSharesTheCache) {
  write("host/ok.cc",
        "namespace nccom {\nint twice(int n) { return 2 * n; }\n}  // namespace nccom\n");
  ASSERT_EQ(lint({"host/ok.cc"}).exit_code, 0);
  // The same tree in another folder: its paths differ, its results do not.
  TempDir other;
  fs::copy(root_, other.path() + "/clone", fs::copy_options::recursive);
  root_ = other.path() + "/clone";
  const auto r = lint({"host/ok.cc"});
  ASSERT_EQ(r.exit_code, 0) << output(r);
  EXPECT_NE(r.out.find("(1 of them unchanged"), std::string::npos) << output(r);
}

}  // namespace
