#include "guard.h"

#include <sys/mman.h>

#include <cstdio>
#include <new>
#include <thread>

namespace nccom::plugin_check {
namespace {

using Clock = std::chrono::steady_clock;

Progress* g_progress = nullptr;
std::thread::id g_driver;

bool on_driver() { return g_progress != nullptr && std::this_thread::get_id() == g_driver; }

void copy_text(char* to, std::size_t size, const char* from) {
  std::snprintf(to, size, "%s", from != nullptr ? from : "");
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

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

Progress* create_shared() {
  void* page =
      mmap(nullptr, sizeof(Progress), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return nullptr;
  static_assert(std::atomic<int64_t>::is_always_lock_free, "shared between processes");
  auto* progress = new (page) Progress;
  reset(progress);
  return progress;
}

void reset(Progress* p) {
  for (std::atomic<int64_t>* t :
       {&p->started_ns, &p->check_started_ns, &p->beat_ns, &p->call_started_ns}) {
    t->store(0);
  }
  p->running[0] = p->step[0] = p->call[0] = '\0';
}

void attach(Progress* progress) {
  g_driver = std::this_thread::get_id();
  g_progress = progress;
  const int64_t now = now_ns();
  progress->started_ns.store(now);
  progress->beat_ns.store(now);
}

void running(const char* name) {
  if (!on_driver()) return;
  copy_text(g_progress->running, sizeof g_progress->running, name);
  g_progress->step[0] = '\0';
  beat();
}

void check_started() {
  if (on_driver()) g_progress->check_started_ns.store(now_ns());
}

void step(const std::string& what) {
  if (on_driver()) copy_text(g_progress->step, sizeof g_progress->step, what.c_str());
}

void beat() {
  if (on_driver()) g_progress->beat_ns.store(now_ns());
}

PluginCall::PluginCall(const char* name) {
  if (!on_driver()) return;
  recorded_ = true;
  copy_text(g_progress->call, sizeof g_progress->call, name);
  const int64_t now = now_ns();
  g_progress->beat_ns.store(now);
  g_progress->call_started_ns.store(now);
}

PluginCall::~PluginCall() {
  if (!recorded_) return;
  g_progress->call_started_ns.store(0);
  g_progress->call[0] = '\0';
  g_progress->beat_ns.store(now_ns());
}

}  // namespace guard
}  // namespace nccom::plugin_check
