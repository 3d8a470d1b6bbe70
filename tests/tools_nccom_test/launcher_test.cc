// The local launcher's pieces that need no ranks: the run bound, how a
// rank's end is described, the free root port.
#include "local_launcher.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

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

TEST(NccomTestLauncher, FindsAFreeLoopbackPort) {
  std::string err;
  EXPECT_NE(find_free_port(&err), 0) << err;
}

}  // namespace
}  // namespace nccom::nccomtest
