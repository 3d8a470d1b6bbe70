// NCCL_TOPO_DUMP_FILE from outside: nccom-test jobs whose dump path is on a
// full filesystem (a small tmpfs, filled, in a private mount namespace).
// Rank 0, the rank that writes the dump, fails naming the path, the bytes
// and the system's reason; the launcher's summary names rank 0 with that
// reason, whichever rank exits first, and each rank that failed because
// rank 0 (or a rank after it) left says so; no dump or temporary is left.
#include "build_paths.h"
#include "child_process.h"
#include "machine.h"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

const std::string kTool = std::string(NCCOM_BUILD_DIR) + "/bin/nccom-test";

// Runs nccom-test with `ranks` local ranks and `extra_env` (NAME=value
// words) in a private mount namespace whose `dir` is a full tmpfs; the
// dump goes to dir/topo.xml. Prints job_rc= and left= (what dir holds).
nccom_test::ChildResult job_on_full_tmpfs(const std::string& dir, int ranks,
                                          const std::string& extra_env) {
  const std::string script = "mount -t tmpfs -o size=4k tmpfs '" + dir + "' || exit 99\n" +
                             // Until it is full, whatever the page size.
                             "dd if=/dev/zero of='" + dir + "/filler' bs=4k 2>/dev/null\n" +
                             "NCCOM_CONFIG= NCCL_DEBUG=WARN NCCL_TOPO_DUMP_FILE='" + dir +
                             "/topo.xml' " + extra_env + " '" + kTool + "' -r " +
                             std::to_string(ranks) + " -b 8 -e 8 -n 1 -w 0 allr; echo job_rc=$?\n" +
                             "echo left=$(ls '" + dir + "')\n";
  return nccom_test::run_child("/usr/bin/unshare",
                               {"--mount", "--propagation", "private", "sh", "-c", script}, {});
}

// The launcher's own lines about ranks: "nccom-test: rank R (host ...".
std::vector<std::string> launcher_lines(const std::string& err) {
  std::vector<std::string> out;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) {
    if (std::regex_search(line, std::regex("^nccom-test: rank [0-9]+ \\(host ")))
      out.push_back(line);
  }
  return out;
}

// What rank 0 says of its dump: the path, the bytes, the reason, what to do.
std::string dump_failure(const std::string& dir) {
  return "NCCL_TOPO_DUMP_FILE (topology.dump_file, written by rank 0): XML: writing '" + dir +
         "/topo.xml' failed after 0 of ";
}
// Its reason, then (when the job's health service answered) what that
// service says, then the summary's end.
constexpr const char* kNoSpace =
    " bytes: No space left on device (free room on that filesystem, or write the file "
    "elsewhere)";
constexpr const char* kSummaryEnd = "; stopped the other ranks";

bool ends_with(const std::string& s, const std::string& end) {
  return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
}

class NccomTestTopoDump : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = nccom_test::machine::mount_namespaces(); !why.empty())
      NCCOM_SKIP_MACHINE_LACKS(kMountNamespaces) << why;
  }
};

// Three ranks: the summary's first line names rank 0 and its write error;
// any other rank the launcher describes failed because a peer left.
TEST_F(NccomTestTopoDump, AFullFilesystemIsNamedOnTheRankThatWritesTheDump) {
  nccom_test::TempDir dir;
  const auto r = job_on_full_tmpfs(dir.path(), 3, "");
  const std::string all = r.out + r.err;
  ASSERT_EQ(r.exit_code, 0) << all;
  EXPECT_NE(r.out.find("job_rc=1\n"), std::string::npos) << all;
  EXPECT_NE(r.out.find("left=filler\n"), std::string::npos) << "a dump or temporary was left\n"
                                                            << all;
  const auto lines = launcher_lines(r.err);
  ASSERT_FALSE(lines.empty()) << all;
  const std::string& summary = lines[0];
  EXPECT_EQ(summary.rfind("nccom-test: rank 0 (host 0, local rank 0) ", 0), 0u) << all;
  EXPECT_NE(summary.find(dump_failure(dir.path())), std::string::npos) << summary;
  EXPECT_NE(summary.find(kNoSpace), std::string::npos) << summary;
  EXPECT_TRUE(ends_with(summary, kSummaryEnd)) << summary;
  for (size_t i = 1; i < lines.size(); ++i) {
    EXPECT_TRUE(std::regex_match(
        lines[i], std::regex("nccom-test: rank [12] \\(host 0, local rank [12]\\) (exited with "
                             "status 1|failed and was still running when it was stopped) because "
                             "rank [01] left")))
        << lines[i] << "\n"
        << all;
  }
}

// Rank 0 slow to exit after its failure (it stays until stopped): rank 1,
// which failed because rank 0 left, exits first; the summary still names
// rank 0 and its write error, and rank 1 as failed because rank 0 left.
TEST_F(NccomTestTopoDump, TheWritingRankIsNamedWhenItsPeerExitsFirst) {
  nccom_test::TempDir dir;
  const auto r = job_on_full_tmpfs(dir.path(), 2, "NCCOM_TEST_DEBUG_HOLD_AFTER_FAILURE=0");
  const std::string all = r.out + r.err;
  ASSERT_EQ(r.exit_code, 0) << all;
  EXPECT_NE(r.out.find("job_rc=1\n"), std::string::npos) << all;
  EXPECT_NE(r.out.find("left=filler\n"), std::string::npos) << all;
  const auto lines = launcher_lines(r.err);
  ASSERT_EQ(lines.size(), 2u) << all;
  EXPECT_EQ(lines[0].rfind("nccom-test: rank 0 (host 0, local rank 0) failed and was still "
                           "running when it was stopped: joining the communicator",
                           0),
            0u)
      << all;
  EXPECT_NE(lines[0].find(dump_failure(dir.path())), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find(kNoSpace), std::string::npos) << lines[0];
  EXPECT_TRUE(ends_with(lines[0], kSummaryEnd)) << lines[0];
  EXPECT_EQ(lines[1],
            "nccom-test: rank 1 (host 0, local rank 1) exited with status 1 because rank 0 left")
      << all;
}

// With room, rank 0 writes the topology it used, and nothing else is left.
TEST(NccomTestTopoDumpWritten, WithRoomTheDumpIsWritten) {
  nccom_test::TempDir dir;
  const auto r =
      nccom_test::run_child(kTool, {"-r", "2", "-b", "8", "-e", "8", "-n", "1", "-w", "0", "allr"},
                            {{"NCCOM_CONFIG", ""},
                             {"NCCL_DEBUG", "WARN"},
                             {"NCCL_TOPO_DUMP_FILE", dir.path() + "/topo.xml"}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto listed = nccom_test::run_child("/bin/ls", {dir.path()}, {});
  EXPECT_EQ(listed.out, "topo.xml\n");
  const auto head =
      nccom_test::run_child("/usr/bin/head", {"-c", "8", dir.path() + "/topo.xml"}, {});
  EXPECT_EQ(head.out, "<system ");
}

}  // namespace
