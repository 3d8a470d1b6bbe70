// scripts/check-deps.sh: a build that read a header of a package outside
// scripts/deps.sh's closure (or of no package) fails, naming it; this build
// passes. The made-up logs use headers every machine that ran deps.sh has.
#include "build_paths.h"
#include "child_process.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

namespace {

using nccom_test::ChildResult;
using nccom_test::run_child;
using nccom_test::TempDir;

ChildResult check_deps(const std::vector<std::string>& args) {
  std::vector<std::string> argv{nccom_test::in_source("scripts/check-deps.sh")};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_child("/bin/bash", argv, {});
}

// A log in `ninja -t deps` form naming `headers` (plus a project header,
// which is not under /usr and is not looked up).
std::string write_log(const TempDir& dir, const std::vector<std::string>& headers) {
  const std::string path = dir.path() + "/deps.log";
  std::ofstream out(path);
  out << "host/CMakeFiles/x.dir/x.cc.o: #deps " << headers.size() + 1 << ", deps mtime 1 (VALID)\n";
  out << "    ../host/x.h\n";
  for (const auto& h : headers) out << "    " << h << "\n";
  return path;
}

std::string output(const ChildResult& r) { return "stdout:\n" + r.out + "\nstderr:\n" + r.err; }

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

TEST(ScriptsCheckDeps, ThisBuildPasses) {
  const auto r = check_deps({NCCOM_BUILD_DIR});
  EXPECT_EQ(r.exit_code, 0) << output(r);
  EXPECT_NE(r.out.find("check-deps: ok"), std::string::npos) << output(r);
}

TEST(ScriptsCheckDeps, AHeaderOfAPackageOutsideTheClosureFailsNamingIt) {
  TempDir dir;
  // pkg-config pulls in pkgconf and the C library, not its headers.
  const auto log = write_log(dir, {"/usr/include/stdio.h"});
  const auto r = check_deps({"--deps-log", log, "--packages", "pkg-config"});
  EXPECT_EQ(r.exit_code, 1) << output(r);
  EXPECT_NE(r.out.find("package libc6-dev: /usr/include/stdio.h"), std::string::npos) << output(r);
  EXPECT_NE(r.out.find("add each package named above to scripts/deps.sh"), std::string::npos)
      << output(r);

  // The same header with deps.sh's own list (build-essential depends on
  // libc6-dev) is accounted for.
  const auto ok = check_deps({"--deps-log", log});
  EXPECT_EQ(ok.exit_code, 0) << output(ok);
}

TEST(ScriptsCheckDeps, AHeaderOfNoPackageFails) {
  TempDir dir;
  const auto log =
      write_log(dir, {"/usr/include/stdio.h", "/usr/local/include/nccom-check-deps-by-hand.h"});
  const auto r = check_deps({"--deps-log", log});
  EXPECT_EQ(r.exit_code, 1) << output(r);
  EXPECT_NE(
      r.out.find(
          "in no package (installed by hand?): /usr/local/include/nccom-check-deps-by-hand.h"),
      std::string::npos)
      << output(r);
  EXPECT_EQ(r.out.find("package libc6-dev"), std::string::npos) << output(r);
}

TEST(ScriptsCheckDeps, EveryOffendingPackageIsNamedOnce) {
  TempDir dir;
  const auto log =
      write_log(dir, {"/usr/include/stdio.h", "/usr/include/stdlib.h", "/usr/include/string.h"});
  const auto r = check_deps({"--deps-log", log, "--packages", "pkg-config"});
  EXPECT_EQ(r.exit_code, 1) << output(r);
  const auto first = r.out.find("package libc6-dev: ");
  ASSERT_NE(first, std::string::npos) << output(r);
  EXPECT_EQ(r.out.find("package libc6-dev: ", first + 1), std::string::npos) << output(r);
  EXPECT_NE(r.out.find("(and 2 more)"), std::string::npos) << output(r);
}

TEST(ScriptsCheckDeps, UnnormalisedSpellingsAreResolved) {
  TempDir dir;
  // gcc records its own headers as /usr/lib/gcc/<triplet>/<v>/../../../../include/...
  const auto log = write_log(dir, {"/usr/include/../include/stdio.h", "/usr/include/./stdlib.h"});
  const auto r = check_deps({"--deps-log", log});
  EXPECT_EQ(r.exit_code, 0) << output(r);
  EXPECT_NE(r.out.find("2 headers under /usr"), std::string::npos) << output(r);
}

TEST(ScriptsCheckDeps, AHeaderReachedThroughAnAlternativeSymlinkIsFound) {
  // Debian's Open MPI headers are reached through the mpi alternative
  // (a symlink no package owns); its target belongs to libopenmpi-dev.
  // The alternative lives under the multiarch include directory, which
  // gcc names (x86_64-linux-gnu, aarch64-linux-gnu, ...).
  const ChildResult triplet = run_child("/bin/sh", {"-c", "gcc -print-multiarch"}, {});
  ASSERT_EQ(triplet.exit_code, 0) << output(triplet);
  const std::string arch = triplet.out.substr(0, triplet.out.find('\n'));
  ASSERT_FALSE(arch.empty()) << "gcc -print-multiarch printed nothing";
  const std::string via_symlink = "/usr/include/" + arch + "/mpi/mpi.h";
  ASSERT_TRUE(exists(via_symlink))
      << via_symlink << " is missing: libopenmpi-dev (scripts/deps.sh) installs it";
  TempDir dir;
  const auto log = write_log(dir, {via_symlink});
  const auto ok = check_deps({"--deps-log", log});
  EXPECT_EQ(ok.exit_code, 0) << output(ok);
  const auto bad = check_deps({"--deps-log", log, "--packages", "pkg-config"});
  EXPECT_EQ(bad.exit_code, 1) << output(bad);
  EXPECT_NE(bad.out.find("package libopenmpi-dev: " + via_symlink), std::string::npos)
      << output(bad);
}

TEST(ScriptsCheckDeps, AnUnreadableLogOrABuildWithoutOneIsAnError) {
  const auto r = check_deps({"--deps-log", "/nonexistent/deps.log"});
  EXPECT_EQ(r.exit_code, 2) << output(r);
  EXPECT_NE(r.err.find("cannot read the dependency log /nonexistent/deps.log"), std::string::npos)
      << output(r);

  TempDir dir;
  const auto empty = check_deps({dir.path()});
  EXPECT_EQ(empty.exit_code, 2) << output(empty);
  EXPECT_NE(empty.err.find(".ninja_deps not found: build first"), std::string::npos)
      << output(empty);
}

}  // namespace
