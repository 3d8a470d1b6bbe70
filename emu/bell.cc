// The emulated device's doorbell (bell.h).
#include "bell.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
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
  // The words the sleeper checks were stored before this increment; a
  // sleeper that read the old count and checked the old words finds the
  // new count in the futex word and does not sleep.
  b->rings.fetch_add(1, std::memory_order_seq_cst);
  if (b->sleepers.load(std::memory_order_seq_cst) != 0)
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

void Idle::wait(uint32_t seen) {
  const Clock::time_point now = Clock::now();
  if (!idle_) {
    idle_ = true;
    since_ = now;
  }
  if (now - since_ < spin_) {
    // A yield is a system call, dearer than the hand-off it waits for when
    // the peer runs on another core; a ring within poll_ is seen without it.
    if (poll_.count() > 0) {
      const Clock::time_point until = now + poll_;
      do {
        for (int i = 0; i < 64; ++i) {
          if (bell_->rings.load(std::memory_order_acquire) != seen) return;
          cpu_relax();
        }
      } while (Clock::now() < until);
    }
    sched_yield();
    return;
  }
  // Announce the sleep, then sleep only if no ring came since `seen`: a
  // ringer that missed the announcement incremented the word first.
  bell_->sleepers.fetch_add(1, std::memory_order_seq_cst);
  if (bell_->rings.load(std::memory_order_seq_cst) == seen) {
    const timespec bound{0, std::chrono::nanoseconds(kMaxSleep).count()};
    (void)futex(&bell_->rings, FUTEX_WAIT, seen, &bound);
  }
  bell_->sleepers.fetch_sub(1, std::memory_order_seq_cst);
}

}  // namespace nrt_emu::bell
