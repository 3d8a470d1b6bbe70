// The local launcher's pieces that need no ranks: the run bound, how a
// rank's end is described, which peer's departure a rank's reason names,
// the free root port.
#include "local_launcher.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace nccom::nccomtest {
namespace {

int status_of_child(int how) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (how < 0) raise(-how);
    _exit(how);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

TEST(NccomTestLauncher, RunBoundCountsEveryCollectiveCall) {
  auto o = parse_options({"-b", "8", "-e", "64", "--timeout-ms", "1000", "--check", "allr"});
  ASSERT_TRUE(o.ok());
  // 4 sizes × (2 placements × (5 warmup + 20 timed + 1 barrier + 1 check) + 2 combining)
  // + 1 placement all-gather + 4.
  EXPECT_EQ(run_bound_ms(*o), (4u * (2u * 27u + 2u) + 1u + 4u) * 1000u);
  o->check = false;
  o->ops.push_back(Op::AllGather);
  EXPECT_EQ(run_bound_ms(*o), (8u * (2u * 26u + 2u) + 1u + 4u) * 1000u);
  // --stats: per placement one more all-reduce per 65536 iterations.
  o->stats = true;
  EXPECT_EQ(run_bound_ms(*o), (8u * (2u * 26u + 2u + 2u) + 1u + 4u) * 1000u);
  o->iters = 65537;
  o->timeout_ms = 1;
  EXPECT_EQ(run_bound_ms(*o), 8u * (2u * 65543u + 2u + 4u) + 1u + 4u);
  o->timeout_ms = 1000;
  // Capped at a week.
  o->timeout_ms = 3600000;
  o->iters = 1000000;
  EXPECT_EQ(run_bound_ms(*o), 7ull * 24 * 3600 * 1000);
}

TEST(NccomTestLauncher, DescribesHowARankEnded) {
  EXPECT_EQ(describe_wait_status(status_of_child(3)), "exited with status 3");
  EXPECT_EQ(describe_wait_status(status_of_child(-SIGKILL)), "was killed by signal 9 (SIGKILL)");
}

// The departures named in ranks' closing lines, in the words of libnccom's
// bootstrap, of the net plugins and of the reference runtime's engine: the
// rank that left, never the rank itself, never a rank the health view names.
TEST(NccomTestLauncher, FindsThePeerWhoseDepartureARankReports) {
  // A peer that gave up its own setup is the first named; its reason (which
  // names the rank before it) is that peer's own.
  EXPECT_EQ(departed_peer("rank 2 of 3: neuronBuildGraphComm (rank 2 of 3): all-gather (ring) "
                          "round 1 with ranks 0/1: bootstrap recv of 4 bytes (RING) from rank 1 "
                          "failed: rank 1 (127.0.0.1:34670) gave up its setup: "
                          "neuronBuildGraphComm: all-gather (ring) round 0 with ranks 2/0: "
                          "bootstrap recv of 4 bytes (RING) from rank 0 failed: rank 0 "
                          "(127.0.0.1:40948) gave up its setup: neuronBuildGraphComm: XML: "
                          "writing '/tmp/x' failed",
                          2),
            1);
  EXPECT_EQ(departed_peer("joining the communicator (root 127.0.0.1:1 from the local parent) "
                          "failed: rank 1 of 2: neuronBuildGraphComm returned status 1: "
                          "neuronBuildGraphComm (rank 1 of 2): all-gather (ring) round 0 with "
                          "ranks 0/0: bootstrap recv of 4 bytes (RING) from rank 0 failed: rank 0 "
                          "(127.0.0.1:57280) closed its connection: its communicator was freed "
                          "or its process exited",
                          1),
            0);
  EXPECT_EQ(departed_peer("rank 2 of 3: all-gather (ring) round 1 with ranks 0/1: bootstrap send "
                          "to rank 0 at 127.0.0.1:35549 failed: connection closed by the peer of "
                          "127.0.0.1:39734",
                          2),
            0);
  EXPECT_EQ(departed_peer("barrier: rank 3 at 127.0.0.1:4 completed its setup and freed its "
                          "communicator",
                          1),
            3);
  EXPECT_EQ(departed_peer("all-reduce 1024 B: process gone: rank 1 (host 0, pid 77 on vm), rank 2 "
                          "(host 0, pid 78 on vm)",
                          0),
            1);
  // Its own rank before the phrase, and no other: no peer to name.
  EXPECT_EQ(departed_peer("rank 2 of 3: connection closed by the peer of 127.0.0.1:39734", 2), -1);
  // No departure: a failure of its own.
  EXPECT_EQ(departed_peer("rank 0 of 2: NCCL_TOPO_DUMP_FILE (topology.dump_file, written by rank "
                          "0): XML: writing '/d/topo.xml' failed after 0 of 1363 bytes: No space "
                          "left on device (free room on that filesystem, or write the file "
                          "elsewhere)",
                          0),
            -1);
  EXPECT_EQ(departed_peer("rank 1 of 2: rank 0 reported 0 ring channels; 1 to 32 are possible", 1),
            -1);
  // What the health service adds about other processes is not the cause.
  EXPECT_EQ(departed_peer("all-reduce timed out after 3000 ms waiting for rank 2; the health "
                          "service says: rank 3 (127.0.0.1:5) closed its connection",
                          1),
            -1);
  // "ranks 0/1" is no rank.
  EXPECT_EQ(departed_peer("round 0 with ranks 0/1: connection closed by 127.0.0.1:9", 2), -1);
}

// A rank's closing line, as nccom-test's ranks write it: the cause, then
// what the rank was doing in a final parenthesis; the health view is not
// part of either.
TEST(NccomTestLauncher, SplitsARankLineIntoCauseAndContext) {
  const RankReason r = split_reason(
      "/c/bad.toml:2:1: unknown key \"bootstrap.protokol\"; did you mean "
      "\"bootstrap.protocol\"? (nccom configuration is invalid: fix it, or point NCCOM_CONFIG at "
      "a good file) (joining the communicator at 127.0.0.1:5 (from the local parent): rank 0 of "
      "2: neuronInitGlobalComm returned status 2); the health service says: LEFT: pid 7 (rank 1)");
  EXPECT_EQ(r.cause,
            "/c/bad.toml:2:1: unknown key \"bootstrap.protokol\"; did you mean "
            "\"bootstrap.protocol\"? (nccom configuration is invalid: fix it, or point "
            "NCCOM_CONFIG at a good file)");
  EXPECT_EQ(r.context,
            "joining the communicator at 127.0.0.1:5 (from the local parent): rank 0 of 2: "
            "neuronInitGlobalComm returned status 2");
  EXPECT_EQ(phase_of(r.context), "joining the communicator");
  EXPECT_EQ(phase_of("allr of 8 B (out-of-place): all-reduce (execution 0): timed out"),
            "allr of 8 B");
  // No context of nccom-test's: the whole line is the cause.
  EXPECT_EQ(split_reason("writing the plot /x.svg failed").cause, "writing the plot /x.svg failed");
  EXPECT_EQ(split_reason("writing the plot /x.svg failed").context, "");
  EXPECT_EQ(split_reason("unbalanced) (").cause, "unbalanced) (");
}

TEST(NccomTestLauncher, WritesRankRangesAndCutsAtCharacters) {
  EXPECT_EQ(rank_ranges({7, 0, 1, 2, 4, 5, 6}), "0-2, 4-7");
  EXPECT_EQ(rank_ranges({3}), "3");
  EXPECT_EQ(rank_ranges({0, 1, 5, 5}), "0-1, 5");
  EXPECT_EQ(ellipsize("short", 10), "short");
  EXPECT_EQ(ellipsize("abcdefghijkl", 10), "abcdefg\u2026");  // 7 bytes and the 3 of "…"
  // Never inside a character: "é" is two bytes.
  EXPECT_EQ(ellipsize("abcdé fghijkl", 8), "abcd\u2026");
}

RankEnd failed_rank(int rank, int host, const std::string& said, int left_for = -1) {
  RankEnd e;
  e.rank = rank;
  e.host = host;
  e.end = "exited with status 1";
  e.said = said;
  e.failed = true;
  e.left_for = left_for;
  return e;
}

const std::string kConfigCause =
    "/tmp/bad.toml:2:1: unknown key \"bootstrap.protokol\"; did you mean \"bootstrap.protocol\"? "
    "(nccom configuration is invalid: fix it, or point NCCOM_CONFIG at a good file)";

std::string joining(int rank) {
  return kConfigCause +
         " (joining the communicator at 127.0.0.1:41234 (from the local parent): "
         "rank " +
         std::to_string(rank) + " of 2: neuronInitGlobalComm returned status 2)";
}

// Every rank failed with the same cause: one group, the cause first, cut
// with an ellipsis to fit, what the ranks were doing after it.
TEST(NccomTestLauncher, SummaryGroupsTheRanksOfOneCause) {
  const std::vector<RankEnd> ranks = {failed_rank(0, 0, joining(0)), failed_rank(1, 0, joining(1))};
  const std::string line = summary_line(ranks, 0);
  EXPECT_LE(line.size(), kSummaryLimit) << line;
  EXPECT_EQ(line.rfind("nccom-test: ranks 0-1 failed: /tmp/bad.toml:2:1: unknown key "
                       "\"bootstrap.protokol\"; did you mean \"bootstrap.protocol\"? (nccom",
                       0),
            0u)
      << line;
  EXPECT_NE(line.find("\u2026"), std::string::npos) << line;
  EXPECT_TRUE(line.size() >= std::string(" (joining the communicator)").size() &&
              line.compare(line.size() - 27, 27, " (joining the communicator)") == 0)
      << line;
  // With room, the cause is whole.
  const std::string roomy = summary_line(ranks, 0, 400);
  EXPECT_EQ(roomy, "nccom-test: ranks 0-1 failed: " + kConfigCause + " (joining the communicator)");
}

// A killed rank is named first by how it ended; the ranks that failed
// because it left — directly or through a rank that did — follow as one
// range, whatever each of them said.
TEST(NccomTestLauncher, SummaryNamesAKilledRankAndTheRanksThatFollowedIt) {
  std::vector<RankEnd> ranks;
  const std::string closed =
      "bootstrap recv of 16 bytes from rank %d failed: rank %d (127.0.0.1:5) closed its "
      "connection: its communicator was freed or its process exited (allr of 8 B (out-of-place): "
      "neuronExpandConnectivity(RDH) returned status 1)";
  auto lost = [&closed](int peer) {
    char text[512];
    std::snprintf(text, sizeof text, closed.c_str(), peer, peer);
    return std::string(text);
  };
  for (int r = 0; r < 8; ++r) {
    if (r == 3) {
      RankEnd k;
      k.rank = 3;
      k.host = 0;
      k.end = "was killed by signal 9 (SIGKILL)";
      k.failed = true;
      ranks.push_back(k);
      continue;
    }
    // Ranks 0 and 4 lost rank 2 or 7, which lost rank 3.
    const int peer = r == 0 ? 2 : r == 4 ? 7 : 3;
    ranks.push_back(failed_rank(r, r / 4, lost(peer), peer));
  }
  const std::string line = summary_line(ranks, 3);
  EXPECT_EQ(line,
            "nccom-test: rank 3 (host 0) was killed by signal 9 (SIGKILL); ranks 0-2, 4-7 failed "
            "because it left");
}

// A rank that failed for a reason of its own is not said to have followed;
// ranks the launcher stopped are named as such; the line stays in bounds.
TEST(NccomTestLauncher, SummaryKeepsOtherCausesApartAndStaysShort) {
  const std::string own =
      "NCCL_TOPO_DUMP_FILE (topology.dump_file, written by rank 0): XML: writing '/full/topo.xml' "
      "failed after 0 of 1363 bytes: No space left on device (free room on that filesystem, or "
      "write the file elsewhere) (joining the communicator at 127.0.0.1:9 (from the local "
      "parent): rank 0 of 4: neuronBuildGraphComm returned status 1)";
  std::vector<RankEnd> ranks = {
      failed_rank(0, 0, own),
      failed_rank(1, 0,
                  "rank 0 (127.0.0.1:9) gave up its setup (joining the communicator at 127.0.0.1:9 "
                  "(from the local parent): neuronBuildGraphComm returned status 1)",
                  0),
      failed_rank(2, 0, "device memory: 1 bytes do not fit (allocating the send buffer (64 B))"),
  };
  RankEnd stopped;
  stopped.rank = 3;
  stopped.host = 1;
  stopped.end = "was killed by signal 15 (SIGTERM)";
  stopped.stopped = true;
  ranks.push_back(stopped);
  const std::string line = summary_line(ranks, 0);
  EXPECT_LE(line.size(), kSummaryLimit) << line;
  EXPECT_EQ(
      line.rfind("nccom-test: rank 0 (host 0) failed: NCCL_TOPO_DUMP_FILE (topology.dump_file, "
                 "written by rank 0): XML: ",
                 0),
      0u)
      << line;
  EXPECT_NE(line.find("\u2026 (joining the communicator); rank 1"), std::string::npos) << line;
  EXPECT_NE(line.find("; rank 1 failed because it left"), std::string::npos) << line;
  EXPECT_NE(line.find("; rank 2 failed too"), std::string::npos) << line;
  EXPECT_TRUE(line.size() > 17 && line.compare(line.size() - 16, 16, "; stopped rank 3") == 0)
      << line;
  // With room, the other cause is given too, and nothing is cut.
  const std::string roomy = summary_line(ranks, 0, 1000);
  EXPECT_NE(roomy.find("; rank 2 failed too: device memory: 1 bytes do not fit;"),
            std::string::npos)
      << roomy;
  EXPECT_EQ(roomy.find("\u2026"), std::string::npos) << roomy;
}

// Ranks whose causes differ only in the numbers they name (each its own
// peer) are one group, in the first rank's words.
TEST(NccomTestLauncher, SummaryGroupsCausesThatDifferOnlyInNumbers) {
  auto isend = [](int peer) {
    return "NET_NEURON send op, channel 32 send to rank " + std::to_string(peer) +
           ": isend in the net plugin TPN returned ncclSystemError (2) (allr of 8 B "
           "(out-of-place): all-reduce (execution 0): the network proxy failed (status 1206))";
  };
  const std::vector<RankEnd> ranks = {failed_rank(0, 0, isend(1)), failed_rank(1, 1, isend(0))};
  EXPECT_EQ(summary_line(ranks, 0, 1000),
            "nccom-test: ranks 0-1 failed alike; rank 0: NET_NEURON send op, channel 32 send to "
            "rank 1: isend in the net plugin TPN returned ncclSystemError (2) (allr of 8 B)");
}

// The reserved port stays taken for plain binds while the reservation
// lives, and a root that binds it with SO_REUSEADDR can listen on it.
TEST(NccomTestLauncher, ReservesALoopbackPortTheRootCanStillListenOn) {
  const PortReservation r;
  ASSERT_NE(r.port(), 0) << r.error();
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(r.port());
  const int plain = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(plain, 0);
  EXPECT_NE(bind(plain, reinterpret_cast<sockaddr*>(&a), sizeof a), 0)
      << "another process could take the port";
  EXPECT_EQ(errno, EADDRINUSE);
  close(plain);
  const int root = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(root, 0);
  const int one = 1;
  ASSERT_EQ(setsockopt(root, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one), 0);
  EXPECT_EQ(bind(root, reinterpret_cast<sockaddr*>(&a), sizeof a), 0) << std::strerror(errno);
  EXPECT_EQ(listen(root, 4), 0) << std::strerror(errno);
  close(root);
}

}  // namespace
}  // namespace nccom::nccomtest
