// The local launcher's pieces that need no ranks: the run bound, how a
// rank's end is described, the free root port.
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
  // 4 sizes × (2 placements × (5 warmup + 20 timed + 1 barrier + 1 check) + 2 combining) + 4.
  EXPECT_EQ(run_bound_ms(*o), (4u * (2u * 27u + 2u) + 4u) * 1000u);
  o->check = false;
  o->ops.push_back(Op::AllGather);
  EXPECT_EQ(run_bound_ms(*o), (8u * (2u * 26u + 2u) + 4u) * 1000u);
  // Capped at a week.
  o->timeout_ms = 3600000;
  o->iters = 1000000;
  EXPECT_EQ(run_bound_ms(*o), 7ull * 24 * 3600 * 1000);
}

TEST(NccomTestLauncher, DescribesHowARankEnded) {
  EXPECT_EQ(describe_wait_status(status_of_child(3)), "exited with status 3");
  EXPECT_EQ(describe_wait_status(status_of_child(-SIGKILL)), "was killed by signal 9 (Killed)");
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
