// The emulated device's doorbell (bell.h).
#include "bell.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <mutex>
#include <shared_mutex>
#include <vector>

namespace nrt_emu::bell {

namespace {

// Shared futexes (no FUTEX_PRIVATE_FLAG): the bell of a rank is rung from
// other processes that map its engine memory.
long futex(std::atomic<uint32_t>* word, int op, uint32_t value, const timespec* timeout) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, timeout, nullptr, 0);
}

// A spin-wait hint: lets the sibling hyper-thread run and eases the exit
// from the loop.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

struct Local {
  std::shared_mutex mutex;
  std::vector<Bell*> bells;
};
Local& local() {
  static Local* l = new Local;  // never destroyed: rung until the process ends
  return *l;
}

}  // namespace

void ring(Bell* b) {
  if (b == nullptr) return;
  // The words were stored before this fence. A loop that announced itself
  // after the fence sees them when it looks again; one that announced
  // before it is seen here, and its futex word changes before it is woken.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (b->sleepers.load(std::memory_order_relaxed) == 0) return;
  b->rings.fetch_add(1, std::memory_order_seq_cst);
  futex(&b->rings, FUTEX_WAKE, INT32_MAX, nullptr);
}

void register_local(Bell* b) {
  std::unique_lock lock(local().mutex);
  local().bells.push_back(b);
}

void unregister_local(Bell* b) {
  std::unique_lock lock(local().mutex);
  auto& v = local().bells;
  v.erase(std::remove(v.begin(), v.end(), b), v.end());
}

void ring_local() {
  std::shared_lock lock(local().mutex);
  for (Bell* b : local().bells) ring(b);
}

void Idle::retire() {
  if (!asleep_) return;
  asleep_ = false;
  bell_->sleepers.fetch_sub(1, std::memory_order_seq_cst);
}

void Idle::wait(uint32_t seen) {
  // A spinning pass is a few pauses; the clock is read on every
  // kClockPasses-th only (it costs about as much as the pauses).
  auto pause = [] {
    for (int i = 0; i < 4; ++i) cpu_relax();
  };
  Clock::time_point now;
  if (!idle_) {
    idle_ = true;
    passes_ = 0;
    now = since_ = yielded_ = Clock::now();
  } else if (spinning_ && ++passes_ % kClockPasses != 0) {
    pause();
    return;
  } else {
    now = Clock::now();
  }
  spinning_ = now - since_ < spin_;
  if (spinning_) {
    // A yield is a system call, dearer than the hand-off it waits for when
    // the peer runs on another core; the peer's store is seen on the next
    // pass without one.
    if (now - yielded_ < poll_) {
      pause();
      return;
    }
    sched_yield();
    yielded_ = Clock::now();
    return;
  }
  if (!asleep_) {
    // Announced before the caller's next look at its words (ring()).
    bell_->sleepers.fetch_add(1, std::memory_order_seq_cst);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    asleep_ = true;
    return;
  }
  if (bell_->rings.load(std::memory_order_seq_cst) == seen) {
    const timespec bound{0, std::chrono::nanoseconds(kMaxSleep).count()};
    if (futex(&bell_->rings, FUTEX_WAIT, seen, &bound) != 0 && errno == ETIMEDOUT) ++timed_out_;
  }
}

}  // namespace nrt_emu::bell
