// fork() while the health service runs and other threads use the registry:
// the child must find no lock held by a thread it does not have, none of its
// parent's communicators, and must be able to start its own service.
#include "health/service.h"
#include "health/state.h"

#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <string>
#include <thread>

namespace nccom::health {
namespace {

// The child's verdict, as its exit status.
enum ChildExit : int { kOk = 0, kInheritedComms = 3, kNoService = 4 };

int child_body(const bootstrap::SocketAddress& host) {
  if (!Registry::instance().comms().empty()) return kInheritedComms;
  Registry::instance().record_error(0, 0, "the child can write");
  (void)Registry::instance().snapshot_text(1, 1, "child", {});
  ServiceSettings s;
  s.client_address.clear();
  const Card card = ensure_service(s, host, "child");
  return card.service && card.pid == static_cast<uint32_t>(getpid()) ? kOk : kNoService;
}

// Waits (bounded) for `pid` on its pidfd; a child still running after
// `limit` is killed and reported as hung.
std::string reap(pid_t pid, std::chrono::milliseconds limit) {
  const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd >= 0) {
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(limit.count()));
    ::close(fd);
    if (ready == 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      return "hung for " + std::to_string(limit.count()) + " ms (a lock inherited held?)";
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return WEXITSTATUS(status) == kOk ? "" : "exit status " + std::to_string(WEXITSTATUS(status));
}

TEST(HealthFork, AChildForkedWhileTheServiceAndRegistryAreBusyStartsClean) {
  auto host = bootstrap::SocketAddress::parse("127.0.0.1:1");
  ASSERT_TRUE(host);
  host->set_port(0);
  ServiceSettings s;
  s.client_address.clear();
  s.keepalive_ms = 10;  // the engine thread loops often
  const Card card = ensure_service(s, *host, "parent");
  ASSERT_TRUE(card.service);
  auto record = Registry::instance().add_comm(0xabc, 0, 2, {card.process, 7});
  record->set_state(CommState::kRunning);

  // Another thread keeps the registry's lock busy, as the scheduler and the
  // health thread do in a running job.
  std::atomic<bool> stop{false};
  std::thread busy([&] {
    std::string text(600, 'x');
    while (!stop.load()) {
      Registry::instance().record_error(0xabc, 0, text);
      (void)Registry::instance().snapshot_text(card.process, 1, "parent", {});
    }
  });

  std::string failure;
  for (int i = 0; i < 200 && failure.empty(); ++i) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) ::_exit(child_body(*host));
    const std::string why = reap(pid, std::chrono::milliseconds(10000));
    if (!why.empty()) failure = "child " + std::to_string(i) + ": " + why;
  }
  stop = true;
  busy.join();
  EXPECT_EQ(failure, "");
  // The parent is untouched: its communicator is still listed.
  EXPECT_EQ(Registry::instance().comms().size(), 1u);
  Registry::instance().remove_comm(record.get());
  stop_service();
  Registry::instance().clear();
}

}  // namespace
}  // namespace nccom::health
