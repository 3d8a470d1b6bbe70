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
#include <cstring>

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
  EXPECT_EQ(describe_wait_status(status_of_child(-SIGKILL)), "was killed by signal 9 (Killed)");
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
