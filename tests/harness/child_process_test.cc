// The harness's child processes: a child does not outlive what started it.
#include "child_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace nccom_test {
namespace {

// A test binary that dies (killed by ctest's timeout) must take its tools
// with it. The parent-death signal follows the thread that forked, so a
// thread that ends without finishing its child shows the same thing without
// killing this process: the child gets SIGTERM.
TEST(ChildProcess, AChildGetsSigtermWhenWhatStartedItEnds) {
  int pid = -1;
  std::thread([&pid] {
    // Once it prints, it has run past the fork (its signal is set).
    RunningChild child = start_child("/bin/sh", {"-c", "echo up; exec sleep 600"}, {});
    if (read_line(child, std::chrono::seconds(10)) != "up") ::kill(child.pid, SIGKILL);
    ::close(child.out_fd);
    ::close(child.err_fd);
    pid = child.pid;
  }).join();
  ASSERT_GT(pid, 0);
  int status = 0;
  pid_t got = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while ((got = ::waitpid(pid, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // polling a wait, bounded
  }
  if (got == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    FAIL() << "the child outlived the thread that started it by 10 s";
  }
  ASSERT_EQ(got, pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "status " << status;
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
}

}  // namespace
}  // namespace nccom_test
