// The emulated device's check that a same-host peer's process is gone:
// real child processes, running, stopped, zombie and reaped.
#include "process_watch.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <string>

namespace nrt_emu::engine {
namespace {

// A child that waits for a signal; killed and reaped by the test.
pid_t idle_child() {
  const pid_t pid = fork();
  if (pid == 0) {
    for (;;) pause();
  }
  return pid;
}

// Waits (bounded by the kernel: a SIGKILLed child always ends) until the
// child is a zombie, without reaping it.
void wait_zombie(pid_t pid) {
  siginfo_t info{};
  ASSERT_EQ(waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT), 0);
}

TEST(ProcessWatch, ARunningOrStoppedProcessIsThere) {
  const pid_t pid = idle_child();
  ASSERT_GT(pid, 0);
  const ProcessWatch watch(pid);
  EXPECT_TRUE(watch.watching());
  EXPECT_FALSE(watch.gone());
  ASSERT_EQ(kill(pid, SIGSTOP), 0);
  siginfo_t info{};
  ASSERT_EQ(waitid(P_PID, static_cast<id_t>(pid), &info, WSTOPPED), 0);
  EXPECT_FALSE(watch.gone()) << "a stopped process is not gone";
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

TEST(ProcessWatch, AZombieAndThenAReapedProcessAreGone) {
  const pid_t pid = idle_child();
  ASSERT_GT(pid, 0);
  const ProcessWatch watch(pid);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  wait_zombie(pid);
  EXPECT_TRUE(watch.gone()) << "zombie";
  ASSERT_EQ(waitpid(pid, nullptr, 0), pid);
  // The watch reads the file it opened: reaped, that read fails with ESRCH
  // whatever holds the pid now.
  EXPECT_TRUE(watch.gone()) << "reaped";
}

TEST(ProcessWatch, AWatchOpenedAfterTheProcessWasReapedIsGone) {
  const pid_t pid = idle_child();
  ASSERT_GT(pid, 0);
  kill(pid, SIGKILL);
  ASSERT_EQ(waitpid(pid, nullptr, 0), pid);
  EXPECT_TRUE(ProcessWatch(pid).gone());
}

TEST(ProcessWatch, AMovedWatchKeepsWatching) {
  const pid_t pid = idle_child();
  ASSERT_GT(pid, 0);
  ProcessWatch a(pid);
  ProcessWatch b(std::move(a));
  ProcessWatch c;
  EXPECT_FALSE(c.watching());
  EXPECT_FALSE(c.gone()) << "an empty watch says nothing";
  c = std::move(b);
  EXPECT_FALSE(c.gone());
  kill(pid, SIGKILL);
  wait_zombie(pid);
  EXPECT_TRUE(c.gone());
  waitpid(pid, nullptr, 0);
}

TEST(ProcessWatch, TheStatLineIsReadAfterTheLastParenthesis) {
  auto gone = [](const std::string& text) {
    return stat_says_gone(text.c_str(), static_cast<long>(text.size()), 0);
  };
  EXPECT_FALSE(gone("42 (rank) S 1 42 42 0 -1 4194560 0 0"));
  EXPECT_FALSE(gone("42 (a) Z (b) R 1 42 42 0 -1 4194560 0 0")) << "a name holding \") Z (\"";
  EXPECT_TRUE(gone("42 (rank) Z 1 42 42 0 -1 4194560 0 0"));
  EXPECT_TRUE(gone("42 (rank) X 1 42 42 0 -1 4194560 0 0"));
  EXPECT_TRUE(gone("42 (rank) R 1 42 42 0 -1 4194564 0 0")) << "PF_EXITING (0x4) set";
  EXPECT_FALSE(gone("42 (rank) R 1 42 42 0 -1 4194560 0 0"));
  EXPECT_FALSE(gone("42 (rank)")) << "cut short: cannot tell";
  EXPECT_FALSE(gone("")) << "cannot tell";
  // A failed read: ESRCH is a reaped process (the race that once named a
  // killed peer alive); any other error says nothing.
  EXPECT_TRUE(stat_says_gone("", -1, ESRCH));
  EXPECT_FALSE(stat_says_gone("", -1, EACCES));
}

}  // namespace
}  // namespace nrt_emu::engine
