// The emulated device's doorbell (emu/bell.h): a ring reaches only a
// sleeper, a spinning wait never sleeps, an old stretch announces itself
// before it sleeps, and hand-offs between two sleeping threads lose no ring.
#include "bell.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace {

using nrt_emu::bell::Bell;
using nrt_emu::bell::Idle;
using nrt_emu::bell::ring;

TEST(EmuBell, ARingWithoutASleeperLeavesTheBellAlone) {
  Bell b;
  ring(&b);
  ring(nullptr);  // a peer without a bell: nothing to do
  EXPECT_EQ(b.rings.load(), 0u) << "a ring nobody sleeps on must not touch the futex word";
  b.sleepers.store(1);
  ring(&b);
  EXPECT_EQ(b.rings.load(), 1u) << "a ring with a sleeper must change the futex word";
}

TEST(EmuBell, ASpinningStretchNeverAnnouncesASleeper) {
  Bell b;
  Idle idle(&b, /*spin_us=*/60u * 1000 * 1000, /*poll_ns=*/0);
  for (int i = 0; i < 100; ++i) {
    idle.wait(idle.seen());
    ASSERT_EQ(b.sleepers.load(), 0u) << "pass " << i;
  }
  EXPECT_EQ(idle.sleeps_timed_out(), 0u);
}

TEST(EmuBell, AnOldStretchAnnouncesItselfBeforeItSleepsAndRetiresWhenItMoves) {
  Bell b;
  {
    Idle idle(&b, /*spin_us=*/0, /*poll_ns=*/0);
    const uint32_t seen = idle.seen();
    idle.wait(seen);  // announces and returns: the caller must look at its words again
    EXPECT_EQ(b.sleepers.load(), 1u);
    EXPECT_EQ(idle.sleeps_timed_out(), 0u) << "the announcing pass must not sleep";
    // A ring after the announcement changes the futex word, so a sleep on
    // the count read before it returns without waiting.
    ring(&b);
    EXPECT_EQ(b.rings.load(), seen + 1);
    idle.wait(seen);
    EXPECT_EQ(idle.sleeps_timed_out(), 0u) << "a rung bell must not be slept on";
    idle.moved();
    EXPECT_EQ(b.sleepers.load(), 0u) << "progress ends the sleeper's announcement";
    idle.wait(idle.seen());
    EXPECT_EQ(b.sleepers.load(), 1u);
  }
  EXPECT_EQ(b.sleepers.load(), 0u) << "a stretch that ends without progress retires too";
}

TEST(EmuBell, ASleepNobodyRingsEndsAtItsBound) {
  Bell b;
  Idle idle(&b, 0, 0);
  idle.wait(idle.seen());  // announce
  const auto t0 = std::chrono::steady_clock::now();
  idle.wait(idle.seen());
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(idle.sleeps_timed_out(), 1u);
  EXPECT_GE(took, Idle::kMaxSleep / 2) << "the sleep returned before its bound without a ring";
}

// Two threads pass a token back and forth 20000 times through two words,
// each waiting in stretches that sleep at once (spin 0), so that every
// hand-off goes through announce, look again, sleep and ring. A lost ring
// costs a sleep that runs to its bound (kMaxSleep) although the peer had
// finished ringing before that bound: counted, there must be none. A sleep
// that ran to its bound because the scheduler held the peer off (a loaded
// machine) ends before the peer's ring does, so it is not counted: with a
// working bell a sleep that times out began more than kMaxSleep before the
// ring that would have woken it returned (a ring that returned earlier
// changed the futex word before the sleep began, or woke the sleeper).
TEST(EmuBell, HandOffsBetweenSleepingThreadsLoseNoRing) {
  using Clock = std::chrono::steady_clock;
  constexpr uint64_t kRounds = 20000;
  Bell bells[2];
  std::atomic<uint64_t> words[2] = {1, 0};  // thread 0 plays first
  uint64_t timed_out[2] = {0, 0};
  // Per thread and round: when the last wait that ran to its bound was
  // called, and when the peer's ring that delivered the round returned.
  std::vector<Clock::time_point> slept[2], rung[2];
  for (int t = 0; t < 2; ++t) {
    slept[t].assign(kRounds + 2, Clock::time_point::min());
    rung[t].assign(kRounds + 2, Clock::time_point::max());
  }
  auto play = [&](int me) {
    const int other = 1 - me;
    for (uint64_t k = 1; k <= kRounds; ++k) {
      Idle idle(&bells[me], /*spin_us=*/0, /*poll_ns=*/0);
      for (;;) {
        const uint32_t seen = idle.seen();
        if (words[me].load(std::memory_order_acquire) >= k) break;
        const uint64_t before = idle.sleeps_timed_out();
        const auto called = Clock::now();
        idle.wait(seen);
        if (idle.sleeps_timed_out() != before) slept[me][k] = called;
      }
      timed_out[me] += idle.sleeps_timed_out();
      const uint64_t delivered = me == 0 ? k : k + 1;
      words[other].store(delivered, std::memory_order_release);
      ring(&bells[other]);
      rung[other][delivered] = Clock::now();
    }
  };
  std::thread t1(play, 1);
  play(0);
  t1.join();
  EXPECT_EQ(words[0].load(), kRounds + 1);
  EXPECT_EQ(words[1].load(), kRounds);
  uint64_t lost = 0;
  for (int t = 0; t < 2; ++t) {
    for (uint64_t k = 1; k <= kRounds; ++k) {
      if (slept[t][k] == Clock::time_point::min()) continue;
      // Round 1 of thread 0 never waits; every other round was rung.
      const bool lost_here = rung[t][k] <= slept[t][k] + Idle::kMaxSleep;
      lost += lost_here;
      EXPECT_FALSE(lost_here)
          << "thread " << t << ", round " << k << ": the ring returned "
          << std::chrono::duration<double, std::micro>(rung[t][k] - slept[t][k]).count()
          << " us after the sleep was called, yet it ran to its bound";
      if (lost > 5) break;
    }
  }
  RecordProperty("sleeps_to_the_bound", std::to_string(timed_out[0] + timed_out[1]));
}

}  // namespace
