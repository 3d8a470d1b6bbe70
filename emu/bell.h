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
// A ring costs a fence and a read of the bell's sleeper count, which stays
// in the ringer's cache while nobody sleeps: only a bell with a sleeper is
// bumped and woken. So a device loop that is still spinning watches its
// words themselves (the cache line the peer writes is the one it reads),
// never the bell. Only once it has spun for long enough does it announce
// itself as a sleeper, look at its words once more (a ringer that missed
// the announcement stored its word before it looked), and sleep on the
// bell's futex for at most a few milliseconds: a bell that is never rung
// (a peer that died, a third-party writer) costs latency, never a hang,
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
// Costs a fence and one read while nobody sleeps on it.
void ring(Bell* b);

// This process's bells, rung by the proxy side (nec_inc_semaphore, a
// finished network task). A bell is registered from its Ccom's init to its
// destruction.
void register_local(Bell* b);
void unregister_local(Bell* b);
void ring_local();

// How long a device loop spins (passes over its words, yields) before it
// sleeps, by default (the engine's knob NEURON_RT_EMU_SPIN_US).
inline constexpr uint32_t kDefaultSpinUs = 20;
// How long a spinning device loop passes over its words without a system
// call before it yields, by default (NEURON_RT_EMU_POLL_NS).
inline constexpr uint32_t kDefaultPollNs = 1000;

// One idle stretch of a device loop, which reads seen() at the top of each
// pass over its words, then calls moved() if anything moved, else wait().
class Idle {
 public:
  Idle(Bell* b, uint32_t spin_us, uint32_t poll_ns) : bell_(b), spin_(spin_us), poll_(poll_ns) {}
  Idle(const Idle&) = delete;
  Idle& operator=(const Idle&) = delete;
  ~Idle() { retire(); }
  uint32_t seen() const { return bell_->rings.load(std::memory_order_seq_cst); }
  void moved() {
    idle_ = false;
    retire();
  }
  // Nothing moved in the pass that began with `seen`. While the stretch is
  // young: a short pause, then back to the words, with a yield once every
  // poll_ns. Once it is old: the first call announces a sleeper and returns
  // (the caller passes over its words once more); later calls sleep until
  // the bell rings after `seen` (bounded by kMaxSleep).
  void wait(uint32_t seen);
  // Sleeps of this Idle that ran to kMaxSleep without a ring.
  uint64_t sleeps_timed_out() const { return timed_out_; }

  static constexpr std::chrono::milliseconds kMaxSleep{5};
  static constexpr uint32_t kClockPasses = 8;

 private:
  using Clock = std::chrono::steady_clock;
  void retire();  // no longer announced as a sleeper
  Bell* bell_;
  std::chrono::microseconds spin_;
  std::chrono::nanoseconds poll_;
  bool idle_ = false;
  bool spinning_ = false;  // the stretch is younger than spin_ (at the last clock read)
  bool asleep_ = false;    // counted in bell_->sleepers
  uint32_t passes_ = 0;
  uint64_t timed_out_ = 0;
  Clock::time_point since_{}, yielded_{};
};

}  // namespace nrt_emu::bell
