// The reference runtime's idle waits: the device loop waiting for its slots
// and the proxy worker ticking idle network tasks. A real device waits in
// hardware; here a waiting "device" is a host thread, and on a machine with
// fewer cores than spinning threads every spin takes a time slice from the
// thread that would make progress (a peer's proxy, a plugin's helper, the
// kernel's TCP). So a wait spins (sched_yield) while it is short, then sleeps
// in steps that grow with the idle time, up to a cap:
//
//   idle < spin_ns            sched_yield
//   afterwards                nanosleep(clamp(idle / 8, kMinSleepNs, kMaxSleepNs))
//
// with the thread's timer slack at 1 µs while it sleeps (restored when the
// wait ends), so a short sleep is short. A wait that ends within the spin
// never sleeps: a host with a core per spinning thread keeps the pure spin.
// NEURON_RT_EMU_IDLE_SPIN_US sets spin_ns (default 50 µs; 0: sleep at once;
// -1: never sleep, a pure spin), read once per process.
#pragma once

#include "../env.h"

#include <sched.h>
#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <cstdint>

namespace nrt_emu::engine {

class IdleBackoff {
 public:
  static constexpr int64_t kMinSleepNs = 2'000;
  static constexpr int64_t kMaxSleepNs = 200'000;

  IdleBackoff() : spin_ns_(spin_setting()) {}
  ~IdleBackoff() { restore_slack(); }
  IdleBackoff(const IdleBackoff&) = delete;
  IdleBackoff& operator=(const IdleBackoff&) = delete;

  // Something moved: the next pause starts a new wait.
  void moved() {
    idle_since_ = 0;
    restore_slack();
  }

  // Nothing moved this turn: how long to sleep now (0: yield instead). The
  // thread's timer slack is 1 µs from the first sleep until moved().
  int64_t next_sleep_ns() {
    const int64_t now = mono_ns();
    if (idle_since_ == 0) idle_since_ = now;
    const int64_t idle = now - idle_since_;
    if (spin_ns_ < 0 || idle < spin_ns_) return 0;
    if (saved_slack_ < 0) {
      saved_slack_ = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
      if (saved_slack_ >= 0) (void)prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    }
    return std::clamp(idle / 8, kMinSleepNs, kMaxSleepNs);
  }

  // Nothing moved this turn: yield or sleep.
  void pause() {
    const int64_t ns = next_sleep_ns();
    if (ns == 0) {
      sched_yield();
      return;
    }
    timespec ts{0, static_cast<long>(ns)};
    (void)nanosleep(&ts, nullptr);
  }

 private:
  static int64_t mono_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  }
  // -1: never sleep. A bad value keeps the default, with one WARN naming it.
  static int64_t spin_setting() {
    static const int64_t ns = [] {
      const long us = env::int_knob("NEURON_RT_EMU_IDLE_SPIN_US", 50, -1, 10'000'000).value_or(50);
      return us < 0 ? int64_t{-1} : static_cast<int64_t>(us) * 1000;
    }();
    return ns;
  }
  void restore_slack() {
    if (saved_slack_ >= 0)
      (void)prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(saved_slack_), 0, 0, 0);
    saved_slack_ = -1;
  }

  int64_t spin_ns_;
  int64_t idle_since_ = 0;
  long saved_slack_ = -1;
};

}  // namespace nrt_emu::engine
