// bell.h — the emulated device's doorbell: how a device loop that has
// nothing to do sleeps until a word it waits on changes, instead of spinning.
//
// Every rank's engine has one Bell in its engine memory (shared, mapped by
// its same-host peers). Whoever changes a word that rank's device loop may
// be waiting on rings it afterwards:
//   - a same-host peer storing a DIRECT link's tail (a slice written) or
//     head (a slot freed), in either rank's memory;
//   - this process's proxy worker, through nec_inc_semaphore (libnccom
//     signalling a NET transfer) and at the end of a network task — both
//     ring every bell registered in the process (ring_local).
// A device loop reads the bell before it looks at its words (seen()), and
// when nothing moved calls Idle::wait with what it read: a ring in between
// makes the wait return at once, so no change is lost. The wait spins
// briefly (a hand-off that comes within microseconds costs no sleep), then
// sleeps on a futex for at most a few milliseconds: a bell that is never
// rung (a peer that died, a third-party writer) costs latency, never a hang,
// and the caller's deadline checks keep their cadence.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace nrt_emu::bell {

struct Bell {
  std::atomic<uint32_t> rings{0};     // bumped by every ring (the futex word)
  std::atomic<uint32_t> sleepers{0};  // device loops asleep on `rings`
};
static_assert(sizeof(Bell) == 8 && std::atomic<uint32_t>::is_always_lock_free,
              "a Bell lives in memory shared between processes");

// After the words changed: wakes whoever sleeps on `b` (nullptr: nothing).
void ring(Bell* b);

// This process's bells, rung by the proxy side (nec_inc_semaphore, a
// finished network task). A bell is registered from its Ccom's init to its
// destruction.
void register_local(Bell* b);
void unregister_local(Bell* b);
void ring_local();

// How long a device loop yields before it sleeps, by default (the engine's
// knob NEURON_RT_EMU_SPIN_US).
inline constexpr uint32_t kDefaultSpinUs = 20;
// How long each idle pass of a device loop first watches its bell without a
// system call before it yields, by default (NEURON_RT_EMU_POLL_NS).
inline constexpr uint32_t kDefaultPollNs = 1000;

// One idle stretch of a device loop: moved() after progress, wait() when
// nothing moved.
class Idle {
 public:
  Idle(Bell* b, uint32_t spin_us, uint32_t poll_ns) : bell_(b), spin_(spin_us), poll_(poll_ns) {}
  uint32_t seen() const { return bell_->rings.load(std::memory_order_seq_cst); }
  void moved() { idle_ = false; }
  // Nothing moved since `seen` was read: while the stretch is young, watch
  // the bell for up to poll_ns (returning as soon as it rings), then yield;
  // once it is old, sleep until the bell rings (bounded by kMaxSleep).
  void wait(uint32_t seen);

  static constexpr std::chrono::milliseconds kMaxSleep{5};

 private:
  using Clock = std::chrono::steady_clock;
  Bell* bell_;
  std::chrono::microseconds spin_;
  std::chrono::nanoseconds poll_;
  bool idle_ = false;
  Clock::time_point since_{};
};

}  // namespace nrt_emu::bell
