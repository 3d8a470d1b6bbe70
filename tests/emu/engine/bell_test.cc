// The emulated device's doorbell (emu/bell.h): a ring reaches only a
// sleeper, a spinning wait never sleeps, an old stretch announces itself
// before it sleeps, and hand-offs between two sleeping threads lose no ring.
#include "bell.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

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
// hand-off goes through announce, look again, sleep and ring. A ring lost
// between the waiter's look at its word and its sleep costs a whole bounded
// sleep (kMaxSleep): counted, they must stay rare. (A peer thread that the
// scheduler holds off for longer than kMaxSleep also counts one; on an
// idle machine there are none.)
TEST(EmuBell, HandOffsBetweenSleepingThreadsLoseNoRing) {
  constexpr uint64_t kRounds = 20000;
  Bell bells[2];
  std::atomic<uint64_t> words[2] = {1, 0};  // thread 0 plays first
  uint64_t timed_out[2] = {0, 0};
  auto play = [&](int me) {
    const int other = 1 - me;
    for (uint64_t k = 1; k <= kRounds; ++k) {
      Idle idle(&bells[me], /*spin_us=*/0, /*poll_ns=*/0);
      for (;;) {
        const uint32_t seen = idle.seen();
        if (words[me].load(std::memory_order_acquire) >= k) break;
        idle.wait(seen);
      }
      timed_out[me] += idle.sleeps_timed_out();
      words[other].store(me == 0 ? k : k + 1, std::memory_order_release);
      ring(&bells[other]);
    }
  };
  std::thread t1(play, 1);
  play(0);
  t1.join();
  EXPECT_EQ(words[0].load(), kRounds + 1);
  EXPECT_EQ(words[1].load(), kRounds);
  EXPECT_LE(timed_out[0] + timed_out[1], kRounds / 200)
      << "sleeps that ran to their bound: " << timed_out[0] << " + " << timed_out[1];
}

}  // namespace
