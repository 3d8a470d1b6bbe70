// EmuProxyTask: the network task's states, the seam calls in order, the
// device-trigger gate, timeouts and failures with their messages.
#include "proxy_fixture.h"

#include <chrono>
#include <string>
#include <thread>

namespace emu_proxy_test {
namespace {

int comm_a;
int comm_b;

class EmuProxyTask : public ProxyTest {
 protected:
  void SetUp() override {
    ProxyTest::SetUp();
    ASSERT_EQ(nrt_emu_proxy_acquire(&comm_a, 0, 2, &proxy_), NRT_SUCCESS);
  }
  void TearDown() override {
    nrt_emu_proxy_release(proxy_);
    ProxyTest::TearDown();
  }
  nrt_emu_proxy_status_t* submit(const nrt_emu_network_task_t& task,
                                 nrt_emu_proxy_t* proxy = nullptr) {
    nrt_emu_proxy_status_t* st = nullptr;
    EXPECT_EQ(nrt_emu_proxy_submit(proxy ? proxy : proxy_, &task, &st), NRT_SUCCESS);
    return st;
  }
  nrt_emu_proxy_t* proxy_ = nullptr;
};

Call start(void* comm, uint32_t stream, uint32_t bb) { return {Fn::Start, comm, stream, bb, 0}; }
Call tick(void* comm, uint32_t stream, uint32_t bb) { return {Fn::Progress, comm, stream, bb, 0}; }
Call stop(void* comm, uint32_t stream) { return {Fn::Stop, comm, stream, 0, 0}; }

TEST_F(EmuProxyTask, EveryBlockIsStartedFirstAndEachSwitchStopsTheStream) {
  Fifos f[3];
  const nrt_emu_proxy_block_t blocks[] = {f[0].block(10), f[1].block(11), f[2].block(12)};
  for (uint32_t bb : {10u, 11u, 12u}) Script::get().set(&comm_a, 1, bb, Behaviour{2});
  const nrt_emu_proxy_stream_t stream{1, blocks, 3};
  nrt_emu_proxy_status_t* st = submit(task_of(&stream, 1, 7));
  ASSERT_EQ(nrt_emu_proxy_wait(st, kWaitMs), NRT_SUCCESS) << nrt_emu_proxy_status_message(st);
  EXPECT_EQ(nrt_emu_proxy_run_state(st), NRT_EMU_TASK_DONE);
  EXPECT_STREQ(nrt_emu_proxy_status_message(st), "");
  nrt_emu_proxy_status_free(st);

  // Each block answers done on its 2nd tick. A switch stops the stream and
  // registers the blocks still to run again; the end stops it.
  const std::vector<Call> want = {
      start(&comm_a, 1, 10), start(&comm_a, 1, 11), start(&comm_a, 1, 12), tick(&comm_a, 1, 10),
      tick(&comm_a, 1, 10),  stop(&comm_a, 1),      start(&comm_a, 1, 11), start(&comm_a, 1, 12),
      tick(&comm_a, 1, 11),  tick(&comm_a, 1, 11),  stop(&comm_a, 1),      start(&comm_a, 1, 12),
      tick(&comm_a, 1, 12),  tick(&comm_a, 1, 12),  stop(&comm_a, 1)};
  EXPECT_EQ(Script::get().calls_of(&comm_a), want);
}

TEST_F(EmuProxyTask, StreamsOfOneTaskProgressSideBySide) {
  Fifos f[2];
  const nrt_emu_proxy_block_t b0 = f[0].block(1);
  const nrt_emu_proxy_block_t b3 = f[1].block(2);
  Script::get().set(&comm_a, 0, 1, Behaviour{1});
  Script::get().set(&comm_a, 3, 2, Behaviour{3});
  const nrt_emu_proxy_stream_t streams[] = {{0, &b0, 1}, {3, &b3, 1}};
  nrt_emu_proxy_status_t* st = submit(task_of(streams, 2, 8));
  ASSERT_EQ(nrt_emu_proxy_wait(st, kWaitMs), NRT_SUCCESS);
  nrt_emu_proxy_status_free(st);
  const std::vector<Call> want = {start(&comm_a, 0, 1), start(&comm_a, 3, 2), tick(&comm_a, 0, 1),
                                  stop(&comm_a, 0),     tick(&comm_a, 3, 2),  tick(&comm_a, 3, 2),
                                  tick(&comm_a, 3, 2),  stop(&comm_a, 3)};
  EXPECT_EQ(Script::get().calls_of(&comm_a), want);
}

TEST_F(EmuProxyTask, IdleAndProgressingArePublishedAndIdleIsNotTerminal) {
  Fifos f;
  const nrt_emu_proxy_block_t block = f.block(4);
  Script::get().set(&comm_a, 0, 4, Behaviour{0, /*idle=*/true});  // never done
  const nrt_emu_proxy_stream_t stream{0, &block, 1};
  nrt_emu_proxy_status_t* st = submit(task_of(&stream, 1, 9));
  ASSERT_TRUE(reaches(st, NRT_EMU_TASK_IDLE));
  const int ticks = Script::get().count(Fn::Progress, &comm_a);
  Script::get().set(&comm_a, 0, 4, Behaviour{0, /*idle=*/false});
  ASSERT_TRUE(reaches(st, NRT_EMU_TASK_PROGRESSING));
  EXPECT_GT(Script::get().count(Fn::Progress, &comm_a), ticks) << "IDLE tasks keep ticking";
  // Done on the next tick from now on.
  Script::get().set(&comm_a, 0, 4, Behaviour{1});
  EXPECT_EQ(nrt_emu_proxy_wait(st, kWaitMs), NRT_SUCCESS);
  EXPECT_EQ(nrt_emu_proxy_run_state(st), NRT_EMU_TASK_DONE);
  nrt_emu_proxy_status_free(st);
}

TEST_F(EmuProxyTask, SkippedTaskIsDoneWithoutTouchingLibnccom) {
  Fifos f;
  const nrt_emu_proxy_block_t block = f.block(4);
  const nrt_emu_proxy_stream_t stream{0, &block, 1};
  nrt_emu_network_task_t task = task_of(&stream, 1, 10);
  task.skip = true;
  nrt_emu_proxy_status_t* st = submit(task);
  EXPECT_EQ(nrt_emu_proxy_wait(st, kWaitMs), NRT_SUCCESS);
  nrt_emu_proxy_status_free(st);
  EXPECT_TRUE(Script::get().calls_of(&comm_a).empty());
}

TEST_F(EmuProxyTask, DeviceGateHoldsProgressUntilEveryWordIsPostedThenConsumesThem) {
  nrt_emu_devmem_t* mem = nullptr;
  ASSERT_EQ(nrt_emu_devmem_create(4096, &mem), NRT_SUCCESS);
  volatile uint32_t* words[2] = {};
  ASSERT_EQ(nrt_emu_devmem_trigger_word(mem, &words[0]), NRT_SUCCESS);
  ASSERT_EQ(nrt_emu_devmem_trigger_word(mem, &words[1]), NRT_SUCCESS);
  EXPECT_EQ(*words[0], 0xFFFFFFFFu);

  Fifos f[2];
  const nrt_emu_proxy_block_t b0 = f[0].block(20);
  const nrt_emu_proxy_block_t b1 = f[1].block(21);
  const nrt_emu_proxy_stream_t streams[] = {{0, &b0, 1}, {1, &b1, 1}};
  nrt_emu_network_task_t task = task_of(streams, 2, 11);
  task.device_gated = true;
  task.trigger_words[0] = words[0];
  task.trigger_words[1] = words[1];
  nrt_emu_proxy_status_t* gated = submit(task);
  ASSERT_TRUE(reaches(gated, NRT_EMU_TASK_WAITING_DEVICE_TRIGGER));

  // A task of another comm on the same worker, 5 ticks long: while it runs
  // the worker steps the gated task at every pass too.
  nrt_emu_proxy_t* other = nullptr;
  ASSERT_EQ(nrt_emu_proxy_acquire(&comm_b, 0, 2, &other), NRT_SUCCESS);
  Fifos g;
  const nrt_emu_proxy_block_t ob = g.block(30);
  Script::get().set(&comm_b, 0, 30, Behaviour{5});
  const nrt_emu_proxy_stream_t os{0, &ob, 1};
  auto run_other = [&](uint64_t exec) {
    nrt_emu_proxy_status_t* st = submit(task_of(&os, 1, exec), other);
    EXPECT_EQ(nrt_emu_proxy_wait(st, kWaitMs), NRT_SUCCESS);
    nrt_emu_proxy_status_free(st);
  };
  run_other(100);
  EXPECT_EQ(Script::get().count(Fn::Progress, &comm_a), 0) << "gate closed: no tick";
  EXPECT_EQ(Script::get().count(Fn::Start, &comm_a), 2) << "INIT registers before the gate";

  __atomic_store_n(words[0], 7u, __ATOMIC_RELEASE);  // one stream posted, not the other
  run_other(101);
  EXPECT_EQ(nrt_emu_proxy_run_state(gated), NRT_EMU_TASK_WAITING_DEVICE_TRIGGER);
  EXPECT_EQ(Script::get().count(Fn::Progress, &comm_a), 0);
  EXPECT_EQ(*words[0], 7u) << "not consumed while another word is still armed";

  __atomic_store_n(words[1], 0u, __ATOMIC_RELEASE);  // any value but -1 posts
  EXPECT_EQ(nrt_emu_proxy_wait(gated, kWaitMs), NRT_SUCCESS);
  EXPECT_EQ(*words[0], 0u);
  EXPECT_EQ(*words[1], 0u);
  EXPECT_EQ(Script::get().count(Fn::Progress, &comm_a), 2);
  nrt_emu_proxy_status_free(gated);

  nrt_emu_proxy_arm_trigger(words[0]);
  EXPECT_EQ(*words[0], 0xFFFFFFFFu);
  nrt_emu_proxy_release(other);
  nrt_emu_devmem_destroy(mem);
}

TEST_F(EmuProxyTask, TimeoutNamesTheTaskAndItsStateAndTheTaskStillFinishes) {
  Fifos f;
  const nrt_emu_proxy_block_t block = f.block(4);
  Script::get().set(&comm_a, 2, 4, Behaviour{0, true});
  const nrt_emu_proxy_stream_t stream{2, &block, 1};
  nrt_emu_proxy_status_t* st = submit(task_of(&stream, 1, 12));
  ASSERT_TRUE(reaches(st, NRT_EMU_TASK_IDLE));
  EXPECT_EQ(nrt_emu_proxy_wait(st, 20), NRT_TIMEOUT);
  const std::string msg = nrt_emu_proxy_status_message(st);
  EXPECT_EQ(msg,
            "[nec_dev 2 gid 0] Timeout exceeded: Waiting on proxy task type 1 (network "
            "task exec 12 rank 0, run state IDLE): 0.020 sec");
  EXPECT_NE(runtime_log().find(msg), std::string::npos);
  Script::get().set(&comm_a, 2, 4, Behaviour{1});
  EXPECT_EQ(nrt_emu_proxy_wait(st, kWaitMs), NRT_SUCCESS);
  EXPECT_STREQ(nrt_emu_proxy_status_message(st), "");
  nrt_emu_proxy_status_free(st);
}

// A device loop waiting on its network task steps it on its own thread
// (nrt_emu_proxy_help); once it stops helping, the worker takes the task
// up again and finishes it.
TEST_F(EmuProxyTask, AHelperStepsTheTaskOnItsOwnThreadAndTheWorkerTakesItBack) {
  Fifos f;
  const nrt_emu_proxy_block_t block = f.block(5);
  Script::get().set(&comm_a, 0, 5, Behaviour{0, /*idle=*/false});  // progressing, never done
  const nrt_emu_proxy_stream_t stream{0, &block, 1};
  nrt_emu_proxy_status_t* st = submit(task_of(&stream, 1, 13));
  ASSERT_TRUE(reaches(st, NRT_EMU_TASK_PROGRESSING));

  // It answers 0 while the worker is inside a step: called again, bounded.
  const int me = gettid_now();
  int moved = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
  while (moved == 0 && std::chrono::steady_clock::now() < until) moved = nrt_emu_proxy_help(proxy_);
  EXPECT_EQ(moved, 1) << "a progressing task moved under the helper";
  bool on_my_thread = false;
  for (const Call& c : Script::get().calls())
    on_my_thread = on_my_thread || (c.fn == Fn::Progress && c.comm == &comm_a && c.tid == me);
  EXPECT_TRUE(on_my_thread) << "the helper's own thread called neuronNetworkProxyProgress";

  // An idle task did not move: the helper says so.
  Script::get().set(&comm_a, 0, 5, Behaviour{0, /*idle=*/true});
  ASSERT_TRUE(reaches(st, NRT_EMU_TASK_IDLE));
  EXPECT_EQ(nrt_emu_proxy_help(proxy_), 0);

  // Nobody helps any more: the worker finishes the task.
  Script::get().set(&comm_a, 0, 5, Behaviour{1});
  ASSERT_EQ(nrt_emu_proxy_wait(st, kWaitMs), NRT_SUCCESS) << nrt_emu_proxy_status_message(st);
  const int worker = nrt_emu_proxy_worker_tid(proxy_);
  const std::vector<Call> calls = Script::get().calls();
  ASSERT_FALSE(calls.empty());
  EXPECT_EQ(calls.back().fn, Fn::Stop);
  EXPECT_EQ(calls.back().tid, worker) << "the worker stopped the finished stream";
  nrt_emu_proxy_status_free(st);

  EXPECT_EQ(nrt_emu_proxy_help(proxy_), 0) << "no task left to step";
  EXPECT_EQ(nrt_emu_proxy_help(nullptr), 0);
}

// A worker standing back sleeps for up to its bound (5 ms) at a time, not
// once per help window: each wake-up is a context switch on a CPU the
// helping loops need. A helper that leaves early wakes it at once.
TEST_F(EmuProxyTask, AWorkerStandingBackWakesRarelyAndTakesTheTaskBackWhenTheHelperLeaves) {
  Fifos f;
  const nrt_emu_proxy_block_t block = f.block(6);
  Script::get().set(&comm_a, 0, 6, Behaviour{0, /*idle=*/true});  // never done
  const nrt_emu_proxy_stream_t stream{0, &block, 1};
  nrt_emu_proxy_status_t* st = submit(task_of(&stream, 1, 14));
  ASSERT_TRUE(reaches(st, NRT_EMU_TASK_IDLE));

  // Help without a break for 100 ms. A worker that woke at the end of every
  // 200 us window would begin about 500 stand-backs. One that sleeps to its
  // 5 ms bound begins one at most every 5 ms of the clock (a spurious
  // wake-up does not end a stand-back: the wait re-checks its predicate, and
  // a helper held off by the scheduler only makes the worker step the task
  // itself once it wakes): at most one more than the 5 ms periods in the
  // window, however long the window took.
  constexpr auto kStandBack = std::chrono::milliseconds(5);
  nrt_emu_proxy_help(proxy_);
  const auto from = std::chrono::steady_clock::now();
  const uint64_t before = nrt_emu_proxy_stand_backs(proxy_);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
  while (std::chrono::steady_clock::now() < until) {
    nrt_emu_proxy_help(proxy_);
    std::this_thread::yield();
  }
  const uint64_t during = nrt_emu_proxy_stand_backs(proxy_) - before;
  const auto window = std::chrono::steady_clock::now() - from;
  const auto periods = static_cast<uint64_t>(window / kStandBack);
  EXPECT_LE(during, periods + 1) << "the worker woke " << during << " times in "
                                 << std::chrono::duration<double, std::milli>(window).count()
                                 << " ms of help";

  // The helper leaves with the task unfinished: the worker finishes it.
  Script::get().set(&comm_a, 0, 6, Behaviour{1});
  nrt_emu_proxy_stop_helping(proxy_);
  ASSERT_EQ(nrt_emu_proxy_wait(st, kWaitMs), NRT_SUCCESS) << nrt_emu_proxy_status_message(st);
  const std::vector<Call> calls = Script::get().calls();
  ASSERT_FALSE(calls.empty());
  EXPECT_EQ(calls.back().fn, Fn::Stop);
  EXPECT_EQ(calls.back().tid, nrt_emu_proxy_worker_tid(proxy_)) << "the worker took the task back";
  nrt_emu_proxy_status_free(st);
  nrt_emu_proxy_stop_helping(nullptr);
  EXPECT_EQ(nrt_emu_proxy_stand_backs(nullptr), 0u);
}

TEST_F(EmuProxyTask, ProgressFailureIsPropagatedWithItsMessageAndTheStreamStopped) {
  Fifos f[2];
  const nrt_emu_proxy_block_t blocks[] = {f[0].block(7), f[1].block(8)};
  Behaviour failing{0};
  failing.fail_at_tick = 3;
  Script::get().set(&comm_a, 1, 7, failing);
  const nrt_emu_proxy_stream_t stream{1, blocks, 2};
  nrt_emu_proxy_status_t* st = submit(task_of(&stream, 1, 42));
  EXPECT_EQ(nrt_emu_proxy_wait(st, kWaitMs), NRT_NETWORK_PROXY_FAILURE);
  EXPECT_EQ(nrt_emu_proxy_run_state(st), NRT_EMU_TASK_DONE);
  EXPECT_STREQ(nrt_emu_proxy_status_message(st),
               "[nec_dev 2 gid 0] Proxy failed to execute task, status = 1206 (network task exec "
               "42 rank 0): neuronNetworkProxyProgress(stream 1, basic block 7) returned 1206");
  // The same failure without the log line's words, for a caller's context.
  EXPECT_STREQ(nrt_emu_proxy_status_reason(st),
               "network task exec 42 rank 0: neuronNetworkProxyProgress(stream 1, basic block 7) "
               "returned 1206");
  nrt_emu_proxy_status_free(st);
  EXPECT_NE(runtime_log().find("[nec_dev 2] ncclNetworkProxyProgress returns 1206"),
            std::string::npos);
  const std::vector<Call> want = {start(&comm_a, 1, 7), start(&comm_a, 1, 8), tick(&comm_a, 1, 7),
                                  tick(&comm_a, 1, 7),  tick(&comm_a, 1, 7),  stop(&comm_a, 1)};
  EXPECT_EQ(Script::get().calls_of(&comm_a), want);
}

TEST_F(EmuProxyTask, StartFailureEndsTheTaskBeforeAnyTick) {
  Fifos f[2];
  const nrt_emu_proxy_block_t b0 = f[0].block(1);
  const nrt_emu_proxy_block_t b1 = f[1].block(2);
  Script::get().fail_start(&comm_a, 1, 2, NRT_INVALID);
  const nrt_emu_proxy_stream_t streams[] = {{0, &b0, 1}, {1, &b1, 1}};
  nrt_emu_proxy_status_t* st = submit(task_of(streams, 2, 43));
  EXPECT_EQ(nrt_emu_proxy_wait(st, kWaitMs), NRT_INVALID);
  EXPECT_NE(std::string(nrt_emu_proxy_status_message(st))
                .find("neuronStartNetworkProxy(stream 1, basic block 2) returned 2"),
            std::string::npos)
      << nrt_emu_proxy_status_message(st);
  nrt_emu_proxy_status_free(st);
  EXPECT_NE(runtime_log().find("[nec_dev 2] failed to start network proxy ret:2"),
            std::string::npos);
  // Stream 0 was registered, so it is released; stream 1 never was.
  const std::vector<Call> want = {start(&comm_a, 0, 1), start(&comm_a, 1, 2), stop(&comm_a, 0)};
  EXPECT_EQ(Script::get().calls_of(&comm_a), want);
}

TEST_F(EmuProxyTask, ReleasingTheLastMemberClosesTasksStillRunning) {
  nrt_emu_proxy_t* own = nullptr;
  ScopedEnv per_proxy("NEURON_RT_RANKS_PER_NETWORK_PROXY", nullptr);
  ASSERT_EQ(nrt_emu_proxy_acquire(&comm_b, 5, 1, &own), NRT_SUCCESS);  // its own group 5
  Fifos f;
  const nrt_emu_proxy_block_t block = f.block(3);
  Script::get().set(&comm_b, 0, 3, Behaviour{0, true});
  const nrt_emu_proxy_stream_t stream{0, &block, 1};
  nrt_emu_proxy_status_t* st = submit(task_of(&stream, 1, 44), own);
  ASSERT_TRUE(reaches(st, NRT_EMU_TASK_IDLE));
  nrt_emu_proxy_release(own);
  EXPECT_EQ(nrt_emu_proxy_wait(st, kWaitMs), NRT_CLOSED);
  EXPECT_NE(std::string(nrt_emu_proxy_status_message(st))
                .find("the proxy queue of group 5 was destroyed before the task finished"),
            std::string::npos)
      << nrt_emu_proxy_status_message(st);
  nrt_emu_proxy_status_free(st);  // the status outlives its queue
}

TEST_F(EmuProxyTask, MalformedTasksAreRefusedWithTheReason) {
  Fifos f;
  nrt_emu_proxy_block_t block = f.block(3);
  nrt_emu_proxy_stream_t stream{0, &block, 1};
  nrt_emu_proxy_status_t* st = nullptr;
  struct Case {
    const char* why;
    nrt_emu_network_task_t task;
  };
  nrt_emu_proxy_block_t no_src = block;
  no_src.src = nullptr;
  nrt_emu_proxy_block_t empty_dst = block;
  empty_dst.dst_n = 0;
  const nrt_emu_proxy_stream_t bad_stream{4, &block, 1};
  const nrt_emu_proxy_stream_t twice[] = {{2, &block, 1}, {2, &block, 1}};
  const nrt_emu_proxy_stream_t s_no_src{0, &no_src, 1};
  const nrt_emu_proxy_stream_t s_empty{0, &empty_dst, 1};
  const nrt_emu_proxy_stream_t no_blocks{0, &block, 0};
  nrt_emu_network_task_t gated = task_of(&stream, 1, 1);
  gated.device_gated = true;
  const Case cases[] = {
      {"streams is NULL", task_of(nullptr, 1, 1)},
      {"streams_n 5 outside 1..4", task_of(&stream, 5, 1)},
      {"streams[0].stream 4 outside 0..3", task_of(&bad_stream, 1, 1)},
      {"streams[1].stream 2 appears twice", task_of(twice, 2, 1)},
      {"streams[0].blocks[0] (basic block 3): a FIFO pointer is NULL", task_of(&s_no_src, 1, 1)},
      {"streams[0].blocks[0] (basic block 3): a FIFO is empty (ops 1, src 1, dst 0)",
       task_of(&s_empty, 1, 1)},
      {"streams[0].blocks_n 0 outside 1..1024", task_of(&no_blocks, 1, 1)},
      {"device-gated task: trigger_words[0] is NULL", gated},
  };
  for (const Case& c : cases) {
    nrt_emu_log_clear();
    EXPECT_EQ(nrt_emu_proxy_submit(proxy_, &c.task, &st), NRT_INVALID) << c.why;
    EXPECT_EQ(st, nullptr);
    EXPECT_NE(runtime_log().find(std::string("refused: ") + c.why), std::string::npos)
        << runtime_log();
  }
  EXPECT_EQ(nrt_emu_proxy_submit(nullptr, &cases[0].task, &st), NRT_INVALID);
  EXPECT_EQ(nrt_emu_proxy_wait(nullptr, 1), NRT_INVALID);
  EXPECT_TRUE(Script::get().calls_of(&comm_a).empty());
}

}  // namespace
}  // namespace emu_proxy_test
