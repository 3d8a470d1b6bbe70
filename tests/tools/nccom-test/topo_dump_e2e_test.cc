// NCCL_TOPO_DUMP_FILE from outside: nccom-test jobs whose dump path is on a
// full filesystem (a small tmpfs, filled, in a private mount namespace).
// Rank 0, the rank that writes the dump, fails naming the path, the bytes
// and the system's reason; the launcher's one summary line names rank 0
// with that reason first, whichever rank exits first, and the ranks that
// failed because rank 0 (or a rank after it) left; no dump or temporary is
// left.
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

// The launcher's summary: its lines about ranks ("nccom-test: rank R (host
// ..." or "nccom-test: ranks ...").
std::vector<std::string> launcher_lines(const std::string& err) {
  std::vector<std::string> out;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) {
    if (std::regex_search(line, std::regex("^nccom-test: (rank [0-9]+ \\(host |ranks )")))
      out.push_back(line);
  }
  return out;
}

// A rank's own closing line ("nccom-test: rank R: ...", relayed with a
// "[rank R] " prefix for ranks other than 0).
std::string own_line(const std::string& err, int rank) {
  const std::string own = "nccom-test: rank " + std::to_string(rank) + ": ";
  const size_t at = err.find(own);
  return at == std::string::npos ? "" : err.substr(at, err.find('\n', at) - at);
}

// What rank 0 says of its dump, first: the path, the bytes, the reason,
// what to do.
std::string dump_failure(const std::string& dir) {
  return "NCCL_TOPO_DUMP_FILE (topology.dump_file, written by rank 0): XML: writing '" + dir +
         "/topo.xml' failed after 0 of ";
}
constexpr const char* kNoSpace =
    " bytes: No space left on device (free room on that filesystem, or write the file "
    "elsewhere)";

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

// Three ranks: one summary line, rank 0 and its write error first (cut to
// fit; rank 0's own line has it whole); the other ranks failed because a
// peer left, or were stopped.
TEST_F(NccomTestTopoDump, AFullFilesystemIsNamedOnTheRankThatWritesTheDump) {
  nccom_test::TempDir dir;
  const auto r = job_on_full_tmpfs(dir.path(), 3, "");
  const std::string all = r.out + r.err;
  ASSERT_EQ(r.exit_code, 0) << all;
  EXPECT_NE(r.out.find("job_rc=1\n"), std::string::npos) << all;
  EXPECT_NE(r.out.find("left=filler\n"), std::string::npos) << "a dump or temporary was left\n"
                                                            << all;
  const std::string own = own_line(r.err, 0);
  EXPECT_EQ(own.rfind("nccom-test: rank 0: " + dump_failure(dir.path()), 0), 0u) << all;
  EXPECT_NE(own.find(kNoSpace), std::string::npos) << own;
  const auto lines = launcher_lines(r.err);
  ASSERT_EQ(lines.size(), 1u) << all;
  const std::string& summary = lines[0];
  EXPECT_LE(summary.size(), 200u) << summary;
  EXPECT_EQ(summary.rfind("nccom-test: rank 0 (host 0) failed: NCCL_TOPO_DUMP_FILE "
                          "(topology.dump_file, written by rank 0): XML: writing '" +
                              dir.path(),
                          0),
            0u)
      << summary;
  EXPECT_TRUE(std::regex_search(
      summary, std::regex("\\(joining the communicator\\)(; ranks? [12](-2)? failed because it "
                          "left)?(; stopped ranks? [12](-2)?)?$")))
      << summary;
}

// Rank 0 slow to exit after its failure (it stays until stopped): rank 1,
// which failed because rank 0 left, exits first; the summary still names
// rank 0 and its write error first, and rank 1 as failed because it left.
TEST_F(NccomTestTopoDump, TheWritingRankIsNamedWhenItsPeerExitsFirst) {
  nccom_test::TempDir dir;
  const auto r = job_on_full_tmpfs(dir.path(), 2, "NCCOM_TEST_DEBUG_HOLD_AFTER_FAILURE=0");
  const std::string all = r.out + r.err;
  ASSERT_EQ(r.exit_code, 0) << all;
  EXPECT_NE(r.out.find("job_rc=1\n"), std::string::npos) << all;
  EXPECT_NE(r.out.find("left=filler\n"), std::string::npos) << all;
  EXPECT_NE(own_line(r.err, 0).find(kNoSpace), std::string::npos) << all;
  const auto lines = launcher_lines(r.err);
  ASSERT_EQ(lines.size(), 1u) << all;
  EXPECT_EQ(lines[0].rfind(
                "nccom-test: rank 0 (host 0) failed: " + dump_failure(dir.path()).substr(0, 60), 0),
            0u)
      << all;
  EXPECT_TRUE(ends_with(lines[0], "(joining the communicator); rank 1 failed because it left"))
      << lines[0];
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
