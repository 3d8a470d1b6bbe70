// The passive progress loop: loading, ticking, re-arming and parking ops,
// the pending-block rule, sticky failures, stop, and what the stall watcher
// hears (ProgressSink) — driven by a scripted transport whose ops finish after a set number of
// ticks (the scheduler's own contract, without a network).
#include "proxy/scheduler.h"

#include "block_builder.h"
#include "log/log.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace nccom::proxy {
namespace {

using testing::BlockBuilder;

// One op that needs `ticks_per_execution` ticks per execution; records
// every call so tests can check the order of events.
struct Journal {
  std::mutex mu;
  std::vector<std::string> events;
  void add(std::string e) {
    std::lock_guard lock(mu);
    events.push_back(std::move(e));
  }
};

class ScriptedOp : public ProxyOp {
 public:
  ScriptedOp(std::string name, int ticks, Journal& j, std::atomic<int>* fail_after)
      : name_(std::move(name)), ticks_(ticks), journal_(j), fail_after_(fail_after) {}
  ~ScriptedOp() override { journal_.add(name_ + " released"); }

  Result<Tick> progress() override {
    if (fail_after_ != nullptr && fail_after_->fetch_sub(1) == 0) {
      return make_error(NRT_FAILURE, name_ + ": peer closed the connection");
    }
    ++done_ticks_;
    journal_.add(name_ + " tick " + std::to_string(done_ticks_));
    Tick t;
    t.idle = stalled_;
    t.execution_done = !stalled_ && done_ticks_ >= ticks_;
    return t;
  }
  Status rearm() override {
    journal_.add(name_ + " rearm");
    done_ticks_ = 0;
    return {};
  }
  std::string describe() const override {
    return name_ + " at tick " + std::to_string(done_ticks_);
  }

  bool stalled_ = false;

 private:
  std::string name_;
  int ticks_;
  int done_ticks_ = 0;
  Journal& journal_;
  std::atomic<int>* fail_after_;
};

class ScriptedTransport : public ProxyTransport {
 public:
  Result<std::unique_ptr<ProxyOp>> make_op(Direction dir, const BlockFifos& f, uint32_t stream,
                                           uint32_t bb) override {
    if (refuse_recv && dir == Direction::Recv) {
      return make_error(NRT_RESOURCE, "no receive connector for this channel");
    }
    const std::string name = std::string(dir == Direction::Send ? "send" : "recv") + "/s" +
                             std::to_string(stream) + "/bb" + std::to_string(bb);
    auto op = std::make_unique<ScriptedOp>(name, ticks, journal, fail_after);
    last = op.get();
    made.push_back(op.get());
    (void)f;
    return std::unique_ptr<ProxyOp>(std::move(op));
  }
  int ticks = 2;
  bool refuse_recv = false;
  std::atomic<int>* fail_after = nullptr;
  Journal journal;
  ScriptedOp* last = nullptr;
  std::vector<ScriptedOp*> made;
};

struct FakeClock {
  std::atomic<uint64_t> now{1000};
  std::function<uint64_t()> fn() {
    return [this] { return now.load(); };
  }
};

class ProxyScheduler : public ::testing::Test {
 protected:
  ProxyScheduler() { block_.op(2, 2).end(); }
  SchedulerSettings settings(std::shared_ptr<ProgressSink> watcher = nullptr) {
    SchedulerSettings s;
    s.watcher = std::move(watcher);
    s.now_ms = clock_.fn();
    return s;
  }
  BlockBuilder block_;
  FakeClock clock_;
  ScriptedTransport transport_;
};

TEST_F(ProxyScheduler, NothingRegisteredIsIdleAndDone) {
  Scheduler sched(transport_, settings());
  auto p = sched.progress(0, 5);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->idle);
  EXPECT_TRUE(p->done);
}

TEST_F(ProxyScheduler, StartRegistersOneSendAndOneRecvOp) {
  Scheduler sched(transport_, settings());
  ASSERT_TRUE(sched.start(1, 7, block_.fifos()).ok());
  EXPECT_EQ(sched.registered_ops(1), 2u);
  EXPECT_EQ(sched.registered_ops(0), 0u);
  ASSERT_TRUE(sched.start(1, 7, block_.fifos()).ok());  // a second channel of the same block
  EXPECT_EQ(sched.registered_ops(1), 4u);
}

TEST_F(ProxyScheduler, AMalformedBlockRegistersNothing) {
  Scheduler sched(transport_, settings());
  block_.src.pop_back();
  const Status s = sched.start(0, 1, block_.fifos());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("EXEC_COMPLETE"), std::string::npos);
  EXPECT_EQ(sched.registered_ops(0), 0u);
  EXPECT_TRUE(transport_.made.empty());
}

TEST_F(ProxyScheduler, ATransportRefusalRegistersNothing) {
  Scheduler sched(transport_, settings());
  transport_.refuse_recv = true;
  const Status s = sched.start(0, 1, block_.fifos());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().status, NRT_RESOURCE);
  EXPECT_EQ(sched.registered_ops(0), 0u);
  // The send op built before the refusal was released, not leaked.
  ASSERT_FALSE(transport_.journal.events.empty());
  EXPECT_EQ(transport_.journal.events.back(), "send/s0/bb1 released");
}

TEST_F(ProxyScheduler, AnExecutionRunsToDoneThenReArmsForTheNext) {
  Scheduler sched(transport_, settings());
  transport_.ticks = 3;
  ASSERT_TRUE(sched.start(0, 4, block_.fifos()).ok());
  for (int execution = 0; execution < 3; ++execution) {
    for (int t = 1; t < 3; ++t) {
      auto p = sched.progress(0, 4);
      ASSERT_TRUE(p.ok());
      EXPECT_FALSE(p->done) << "execution " << execution << " tick " << t;
      EXPECT_FALSE(p->idle);
    }
    auto p = sched.progress(0, 4);
    ASSERT_TRUE(p.ok());
    EXPECT_TRUE(p->done) << "execution " << execution;
  }
  // Each execution: 3 ticks per op, then one rearm per op; ops are reused.
  int rearms = 0;
  for (const auto& e : transport_.journal.events) rearms += e.ends_with("rearm") ? 1 : 0;
  EXPECT_EQ(rearms, 6);
  EXPECT_EQ(transport_.made.size(), 2u);
}

TEST_F(ProxyScheduler, ABlockRequestedWhileAnotherRunsKeepsTheTaskAlive) {
  Scheduler sched(transport_, settings());
  transport_.ticks = 2;
  ASSERT_TRUE(sched.start(0, 1, block_.fifos()).ok());
  ASSERT_TRUE(sched.start(0, 2, block_.fifos()).ok());
  auto p = sched.progress(0, 1);  // loads block 1
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->done);
  p = sched.progress(0, 2);  // block 1 finishes, but block 2 is waiting
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->done);
  EXPECT_FALSE(p->idle);
  p = sched.progress(0, 2);  // block 2 loads now
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->done);
  p = sched.progress(0, 2);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->done);
  std::vector<std::string> ticks;
  for (const auto& e : transport_.journal.events) {
    if (e.find(" tick ") != std::string::npos) ticks.push_back(e);
  }
  const std::vector<std::string> expected = {
      "send/s0/bb1 tick 1", "recv/s0/bb1 tick 1", "send/s0/bb1 tick 2", "recv/s0/bb1 tick 2",
      "send/s0/bb2 tick 1", "recv/s0/bb2 tick 1", "send/s0/bb2 tick 2", "recv/s0/bb2 tick 2"};
  EXPECT_EQ(ticks, expected);
}

TEST_F(ProxyScheduler, AFailureIsStickyUntilStop) {
  Scheduler sched(transport_, settings());
  std::atomic<int> fail_after{3};
  transport_.fail_after = &fail_after;
  transport_.ticks = 100;
  ASSERT_TRUE(sched.start(2, 3, block_.fifos()).ok());
  Result<Progress> p = Progress{};
  int ticks = 0;
  while ((p = sched.progress(2, 3)).ok()) ++ticks;
  EXPECT_EQ(ticks, 1);  // ticks 1-2 of send+recv use up 3 calls; the 4th fails
  EXPECT_NE(p.error().message.find(" (stream 2, basic block 3)"), std::string::npos);
  EXPECT_NE(p.error().message.find("peer closed the connection"), std::string::npos);
  auto again = sched.progress(2, 3);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().message, p.error().message);
  // Other streams are unaffected.
  EXPECT_TRUE(sched.progress(1, 3).ok());
  ASSERT_TRUE(sched.stop(2).ok());
  EXPECT_EQ(sched.registered_ops(2), 0u);
  auto after = sched.progress(2, 3);
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->done);
}

TEST_F(ProxyScheduler, StopReleasesEveryOpOfTheStream) {
  Scheduler sched(transport_, settings());
  ASSERT_TRUE(sched.start(3, 1, block_.fifos()).ok());
  ASSERT_TRUE(sched.start(3, 2, block_.fifos()).ok());
  ASSERT_TRUE(sched.progress(3, 1).ok());  // block 1 running
  ASSERT_TRUE(sched.stop(3).ok());
  int released = 0;
  for (const auto& e : transport_.journal.events) released += e.ends_with("released") ? 1 : 0;
  EXPECT_EQ(released, 4);
}

TEST_F(ProxyScheduler, StreamsOutOfRangeAreRefused) {
  Scheduler sched(transport_, settings());
  EXPECT_FALSE(sched.start(4, 1, block_.fifos()).ok());
  auto p = sched.progress(4, 1);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("stream 4 is out of range (0..3)"), std::string::npos);
  EXPECT_FALSE(sched.stop(99).ok());
}

// Captures WARN lines.
std::mutex g_warn_mu;
std::vector<std::string> g_warns;
void capture_warn(const char* line, std::size_t n) {
  std::lock_guard lock(g_warn_mu);
  g_warns.emplace_back(line, n);
}
std::vector<std::string> take_warns() {
  std::lock_guard lock(g_warn_mu);
  return std::exchange(g_warns, {});
}

// A watcher that writes down what it hears, and hands out a verdict once
// the test sets one (the health service's part, without its thread).
class RecordingWatcher : public ProgressSink {
 public:
  void began(uint32_t stream, uint32_t block, uint64_t now_ms) override {
    heard.push_back("began " + std::to_string(stream) + "/" + std::to_string(block) + " at " +
                    std::to_string(now_ms));
  }
  void moved(uint32_t stream, uint64_t now_ms, bool after_stall) override {
    heard.push_back("moved " + std::to_string(stream) + " at " + std::to_string(now_ms) +
                    (after_stall ? " after stall" : ""));
  }
  void completed(uint32_t stream) override {
    heard.push_back("completed " + std::to_string(stream));
  }
  void stalled(uint32_t stream, StallDescription what) override {
    heard.push_back("stalled " + std::to_string(stream) + ": " + what.ops);
  }
  std::optional<std::string> verdict(uint32_t stream) override {
    ++asked;
    (void)stream;
    return verdict_text;
  }
  void failed(uint32_t stream, const std::string& message) override {
    heard.push_back("failed " + std::to_string(stream) + ": " + message);
  }
  void stopped(uint32_t stream) override { heard.push_back("stopped " + std::to_string(stream)); }

  std::vector<std::string> heard;
  std::optional<std::string> verdict_text;
  int asked = 0;
};

TEST_F(ProxyScheduler, TheWatcherHearsEachExecutionBeginMoveAndComplete) {
  auto watcher = std::make_shared<RecordingWatcher>();
  Scheduler sched(transport_, settings(watcher));
  ASSERT_TRUE(sched.start(2, 9, block_.fifos()).ok());  // 2 ticks per execution
  ASSERT_TRUE(sched.progress(2, 9).ok());
  clock_.now += 5;
  auto p = sched.progress(2, 9);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->done);
  EXPECT_EQ(watcher->heard,
            (std::vector<std::string>{"began 2/9 at 1000", "moved 2 at 1000", "completed 2"}));
  EXPECT_EQ(watcher->asked, 0) << "a moving stream is not asked for a verdict";
}

TEST_F(ProxyScheduler, AStallIsDescribedOnceAfterASecondNamingEachOp) {
  auto watcher = std::make_shared<RecordingWatcher>();
  Scheduler sched(transport_, settings(watcher));
  transport_.ticks = 1000;
  ASSERT_TRUE(sched.start(0, 6, block_.fifos()).ok());
  ASSERT_TRUE(sched.progress(0, 6).ok());  // loads; both ops move (tick 1)
  for (ScriptedOp* op : transport_.made) op->stalled_ = true;
  clock_.now += kDescribeAfterMs - 1;
  ASSERT_TRUE(sched.progress(0, 6).ok());
  ASSERT_EQ(watcher->heard.size(), 2u) << "described before a second passed";
  clock_.now += 1;
  ASSERT_TRUE(sched.progress(0, 6).ok());
  clock_.now += 50000;
  auto p = sched.progress(0, 6);  // no second description of the same stall
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->idle);
  EXPECT_FALSE(p->done);
  transport_.made[0]->stalled_ = false;
  ASSERT_TRUE(sched.progress(0, 6).ok());
  ASSERT_EQ(watcher->heard.size(), 4u);
  EXPECT_EQ(watcher->heard[2], "stalled 0: send/s0/bb6 at tick 3; recv/s0/bb6 at tick 3");
  EXPECT_EQ(watcher->heard[3], "moved 0 at 52000 after stall");
  EXPECT_EQ(watcher->asked, 3) << "each tick without progress asks for the verdict";
}

TEST_F(ProxyScheduler, TheWatchersVerdictFailsTheStreamOnceUntilStopped) {
  log::set_warn_sink(capture_warn);
  take_warns();
  auto watcher = std::make_shared<RecordingWatcher>();
  Scheduler sched(transport_, settings(watcher));
  transport_.ticks = 1000;
  ASSERT_TRUE(sched.start(1, 2, block_.fifos()).ok());
  ASSERT_TRUE(sched.progress(1, 2).ok());
  for (ScriptedOp* op : transport_.made) op->stalled_ = true;
  ASSERT_TRUE(sched.progress(1, 2).ok());
  watcher->verdict_text = "no progress for 30000 ms (health.stall_fail_s): waiting on rank 3";
  auto p = sched.progress(1, 2);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().status, NRT_TIMEOUT);
  EXPECT_EQ(p.error().message, *watcher->verdict_text);
  EXPECT_FALSE(sched.progress(1, 2).ok());  // sticky, not logged or asked again
  EXPECT_EQ(watcher->asked, 2);
  log::set_warn_sink(nullptr);
  const std::vector<std::string> warns = take_warns();
  ASSERT_EQ(warns.size(), 1u) << "the failure's reason is logged exactly once";
  EXPECT_NE(warns[0].find("proxy: no progress for 30000 ms (health.stall_fail_s)"),
            std::string::npos)
      << warns[0];
  EXPECT_EQ(watcher->heard.back(), "failed 1: " + *watcher->verdict_text);

  watcher->verdict_text.reset();
  ASSERT_TRUE(sched.stop(1).ok());
  EXPECT_EQ(watcher->heard.back(), "stopped 1");
  ASSERT_TRUE(sched.start(1, 2, block_.fifos()).ok());
  EXPECT_TRUE(sched.progress(1, 2).ok()) << "a stopped stream starts afresh";
}

TEST_F(ProxyScheduler, AFailedTickIsReportedToTheWatcher) {
  std::atomic<int> fail_after{1};
  transport_.fail_after = &fail_after;
  auto watcher = std::make_shared<RecordingWatcher>();
  Scheduler sched(transport_, settings(watcher));
  ASSERT_TRUE(sched.start(0, 4, block_.fifos()).ok());
  auto p = sched.progress(0, 4);
  ASSERT_FALSE(p.ok());
  ASSERT_FALSE(watcher->heard.empty());
  EXPECT_EQ(watcher->heard.back(), "failed 0: " + p.error().message);
  EXPECT_NE(p.error().message.find("peer closed the connection"), std::string::npos);
}

// Different streams are independent: ticked from their own threads (as the
// runtime's shared proxy workers may do) they never see each other's ops.
TEST_F(ProxyScheduler, StreamsProgressConcurrently) {
  Scheduler sched(transport_, settings());
  transport_.ticks = 5;
  for (uint32_t s = 0; s < kMaxStreams; ++s)
    ASSERT_TRUE(sched.start(s, s + 10, block_.fifos()).ok());
  std::vector<std::thread> workers;
  std::atomic<int> executions{0};
  for (uint32_t s = 0; s < kMaxStreams; ++s) {
    workers.emplace_back([&, s] {
      for (int i = 0; i < 500; ++i) {
        auto p = sched.progress(s, s + 10);
        if (!p.ok()) return;
        if (p->done) ++executions;
      }
    });
  }
  for (auto& w : workers) w.join();
  EXPECT_EQ(executions.load(), 4 * 100);
}

}  // namespace
}  // namespace nccom::proxy
