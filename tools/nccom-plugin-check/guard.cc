#include "guard.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <thread>

namespace nccom::plugin_check {
namespace {

using Clock = std::chrono::steady_clock;

std::atomic<const char*> g_check{nullptr};
std::atomic<Clock::rep> g_last_beat{0};
std::thread::id g_driver;
// The step text is read by the crash handler, which cannot take a lock; a
// torn read there only garbles a message the process dies with anyway.
char g_step[256] = "";
std::mutex g_step_mutex;

void write_all(int fd, const char* text) {
  size_t left = strlen(text);
  while (left > 0) {
    const ssize_t n = write(fd, text, left);
    if (n <= 0) return;
    text += n;
    left -= static_cast<size_t>(n);
  }
}

extern "C" void on_crash(int sig) {
  // Only async-signal-safe calls from here on.
  const char* check = g_check.load();
  write_all(2, "\nnccom-plugin-check: FAIL ");
  write_all(2, check != nullptr ? check : "(between checks)");
  write_all(2, ": the process crashed with signal ");
  const char* name = sigabbrev_np(sig);
  write_all(2, name != nullptr ? name : "?");
  if (g_step[0] != '\0') {
    write_all(2, " during ");
    write_all(2, g_step);
  }
  write_all(2, "\n");
  raise(sig);  // SA_RESETHAND restored the default action
}

void watch(std::chrono::milliseconds stall_limit) {
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const char* check = g_check.load();
    if (check == nullptr) continue;
    const auto idle = Clock::now() - Clock::time_point(Clock::duration(g_last_beat.load()));
    if (idle < stall_limit) continue;
    std::string step;
    {
      std::lock_guard<std::mutex> lock(g_step_mutex);
      step = g_step;
    }
    std::fprintf(
        stderr,
        "\nnccom-plugin-check: FAIL %s: timed out waiting for %s: the call did not "
        "return in %lld s; aborting\n",
        check, step.empty() ? "the plugin" : step.c_str(),
        static_cast<long long>(std::chrono::duration_cast<std::chrono::seconds>(idle).count()));
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(3);
  }
}

}  // namespace

bool Deadline::expired() const {
  guard::beat();
  return Clock::now() >= end_;
}

std::chrono::milliseconds Deadline::remaining() const {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end_ - Clock::now());
  return left.count() > 0 ? left : std::chrono::milliseconds(0);
}

namespace guard {

void install(std::chrono::milliseconds stall_limit) {
  g_driver = std::this_thread::get_id();
  struct sigaction action {};
  action.sa_handler = on_crash;
  action.sa_flags = SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) sigaction(sig, &action, nullptr);
  beat();
  if (stall_limit.count() > 0) std::thread(watch, stall_limit).detach();
}

void running(const char* check) {
  step("");
  beat();
  g_check.store(check);
}

void step(const std::string& what) {
  std::lock_guard<std::mutex> lock(g_step_mutex);
  snprintf(g_step, sizeof g_step, "%s", what.c_str());
}

void beat() {
  if (std::this_thread::get_id() == g_driver) {
    g_last_beat.store(Clock::now().time_since_epoch().count());
  }
}

}  // namespace guard
}  // namespace nccom::plugin_check
