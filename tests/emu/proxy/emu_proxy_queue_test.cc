// EmuProxyQueue: the shared-proxy groups, their workers, affinity, refcounts.
#include "proxy_fixture.h"

#include <set>
#include <string>

namespace emu_proxy_test {
namespace {

using EmuProxyQueue = ProxyTest;

int dummy_comms[8];

TEST_F(EmuProxyQueue, WorkerIsNamedAfterItsTidAndPlacedBeforeAnyWork) {
  const int threads = thread_count();
  nrt_emu_proxy_t* p = nullptr;
  ASSERT_EQ(nrt_emu_proxy_acquire(&dummy_comms[0], 0, 3, &p), NRT_SUCCESS);
  const int tid = nrt_emu_proxy_worker_tid(p);
  EXPECT_EQ(thread_count(), threads + 1);
  EXPECT_EQ(nrt_emu_proxy_worker_count(), 1);
  EXPECT_NE(tid, gettid_now());
  EXPECT_EQ(thread_name(tid), "proxy-" + std::to_string(tid));

  Fifos f;
  const nrt_emu_proxy_block_t block = f.block(5);
  const nrt_emu_proxy_stream_t stream{0, &block, 1};
  const nrt_emu_network_task_t task = task_of(&stream, 1, 1);
  nrt_emu_proxy_status_t* st = nullptr;
  ASSERT_EQ(nrt_emu_proxy_submit(p, &task, &st), NRT_SUCCESS);
  ASSERT_EQ(nrt_emu_proxy_wait(st, kWaitMs), NRT_SUCCESS) << nrt_emu_proxy_status_message(st);
  nrt_emu_proxy_status_free(st);
  nrt_emu_proxy_release(p);

  const std::vector<Call> calls = Script::get().calls();
  ASSERT_FALSE(calls.empty());
  EXPECT_EQ(calls.front().fn, Fn::Affinity) << "neuronSetAffinity must come before any work";
  EXPECT_EQ(calls.front().comm, &dummy_comms[0]);
  EXPECT_EQ(Script::get().count(Fn::Affinity, &dummy_comms[0]), 1);
  for (const Call& c : calls) EXPECT_EQ(c.tid, tid) << "every call runs on the worker";
}

TEST_F(EmuProxyQueue, AffinityFailureIsLoggedAndTheWorkerStillRuns) {
  Script::get().set_affinity_rc(NRT_FAILURE);
  nrt_emu_proxy_t* p = nullptr;
  ASSERT_EQ(nrt_emu_proxy_acquire(&dummy_comms[0], 0, 0, &p), NRT_SUCCESS);
  Fifos f;
  const nrt_emu_proxy_block_t block = f.block(1);
  const nrt_emu_proxy_stream_t stream{0, &block, 1};
  const nrt_emu_network_task_t task = task_of(&stream, 1, 2);
  nrt_emu_proxy_status_t* st = nullptr;
  ASSERT_EQ(nrt_emu_proxy_submit(p, &task, &st), NRT_SUCCESS);
  EXPECT_EQ(nrt_emu_proxy_wait(st, kWaitMs), NRT_SUCCESS);
  nrt_emu_proxy_status_free(st);
  nrt_emu_proxy_release(p);
  EXPECT_NE(runtime_log().find("proxy worker of group 0: neuronSetAffinity returned 1"),
            std::string::npos)
      << runtime_log();
}

TEST_F(EmuProxyQueue, RanksShareAWorkerPerGroupAndTheLastReleaseJoinsIt) {
  ScopedEnv per_proxy("NEURON_RT_RANKS_PER_NETWORK_PROXY", "2");
  const int threads = thread_count();
  nrt_emu_proxy_t* r0 = nullptr;
  nrt_emu_proxy_t* r1 = nullptr;
  nrt_emu_proxy_t* r2 = nullptr;
  ASSERT_EQ(nrt_emu_proxy_acquire(&dummy_comms[0], 0, 0, &r0), NRT_SUCCESS);
  ASSERT_EQ(nrt_emu_proxy_acquire(&dummy_comms[1], 1, 0, &r1), NRT_SUCCESS);
  ASSERT_EQ(nrt_emu_proxy_acquire(&dummy_comms[2], 2, 1, &r2), NRT_SUCCESS);
  EXPECT_EQ(nrt_emu_proxy_group(r0), 0);  // 0 / 2
  EXPECT_EQ(nrt_emu_proxy_group(r1), 0);  // 1 / 2
  EXPECT_EQ(nrt_emu_proxy_group(r2), 1);  // 2 / 2
  EXPECT_EQ(nrt_emu_proxy_worker_tid(r0), nrt_emu_proxy_worker_tid(r1));
  EXPECT_NE(nrt_emu_proxy_worker_tid(r0), nrt_emu_proxy_worker_tid(r2));
  EXPECT_EQ(nrt_emu_proxy_refcount(r0), 2);
  EXPECT_EQ(nrt_emu_proxy_refcount(r2), 1);
  EXPECT_EQ(nrt_emu_proxy_worker_count(), 2);
  EXPECT_EQ(thread_count(), threads + 2);
  // Affinity once per worker, for the comm that created the group.
  EXPECT_EQ(Script::get().count(Fn::Affinity, &dummy_comms[1]), 0);

  // The second comm's tasks run on the shared worker.
  Fifos f;
  const nrt_emu_proxy_block_t block = f.block(9);
  const nrt_emu_proxy_stream_t stream{0, &block, 1};
  const nrt_emu_network_task_t task = task_of(&stream, 1, 3);
  nrt_emu_proxy_status_t* st = nullptr;
  ASSERT_EQ(nrt_emu_proxy_submit(r1, &task, &st), NRT_SUCCESS);
  ASSERT_EQ(nrt_emu_proxy_wait(st, kWaitMs), NRT_SUCCESS);
  nrt_emu_proxy_status_free(st);
  for (const Call& c : Script::get().calls_of(&dummy_comms[1])) {
    EXPECT_EQ(c.tid, nrt_emu_proxy_worker_tid(r0));
  }

  const int shared_tid = nrt_emu_proxy_worker_tid(r1);
  nrt_emu_proxy_release(r0);
  EXPECT_EQ(nrt_emu_proxy_refcount(r1), 1);
  EXPECT_EQ(nrt_emu_proxy_worker_count(), 2) << "a member remains: the worker stays";
  EXPECT_EQ(nrt_emu_proxy_worker_tid(r1), shared_tid);
  nrt_emu_proxy_release(r1);
  EXPECT_EQ(nrt_emu_proxy_worker_count(), 1) << "last member of group 0 left: joined";
  EXPECT_EQ(thread_count(), threads + 1);
  nrt_emu_proxy_release(r2);
  EXPECT_EQ(thread_count(), threads);
}

TEST_F(EmuProxyQueue, DefaultIsOneWorkerPerRank) {
  ScopedEnv per_proxy("NEURON_RT_RANKS_PER_NETWORK_PROXY", nullptr);
  nrt_emu_proxy_t* a = nullptr;
  nrt_emu_proxy_t* b = nullptr;
  ASSERT_EQ(nrt_emu_proxy_acquire(&dummy_comms[0], 0, 0, &a), NRT_SUCCESS);
  ASSERT_EQ(nrt_emu_proxy_acquire(&dummy_comms[1], 1, 0, &b), NRT_SUCCESS);
  EXPECT_EQ(nrt_emu_proxy_group(a), 0);
  EXPECT_EQ(nrt_emu_proxy_group(b), 1);
  EXPECT_NE(nrt_emu_proxy_worker_tid(a), nrt_emu_proxy_worker_tid(b));
  // A second comm of the same rank joins rank 0's group.
  nrt_emu_proxy_t* a2 = nullptr;
  ASSERT_EQ(nrt_emu_proxy_acquire(&dummy_comms[2], 0, 0, &a2), NRT_SUCCESS);
  EXPECT_EQ(nrt_emu_proxy_worker_tid(a2), nrt_emu_proxy_worker_tid(a));
  EXPECT_EQ(nrt_emu_proxy_refcount(a), 2);
  nrt_emu_proxy_release(a2);
  nrt_emu_proxy_release(b);
  nrt_emu_proxy_release(a);
}

TEST_F(EmuProxyQueue, BadGroupSizeIsRefusedAndNamed) {
  for (const char* bad : {"0", "-1", "two", "4097"}) {
    ScopedEnv per_proxy("NEURON_RT_RANKS_PER_NETWORK_PROXY", bad);
    nrt_emu_log_clear();
    nrt_emu_proxy_t* p = reinterpret_cast<nrt_emu_proxy_t*>(&dummy_comms[7]);
    EXPECT_EQ(nrt_emu_proxy_acquire(&dummy_comms[0], 0, 0, &p), NRT_INVALID) << bad;
    EXPECT_EQ(p, nullptr);
    EXPECT_NE(runtime_log().find(std::string("NEURON_RT_RANKS_PER_NETWORK_PROXY=") + bad +
                                 " is not an integer in 1..4096"),
              std::string::npos)
        << runtime_log();
  }
  EXPECT_EQ(nrt_emu_proxy_worker_count(), 0);
}

TEST_F(EmuProxyQueue, AcquireChecksItsArgumentsAndTheTable) {
  nrt_emu_proxy_t* p = nullptr;
  EXPECT_EQ(nrt_emu_proxy_acquire(nullptr, 0, 0, &p), NRT_INVALID);
  EXPECT_EQ(nrt_emu_proxy_acquire(&dummy_comms[0], 0, 0, nullptr), NRT_INVALID);
  EXPECT_EQ(nrt_emu_proxy_acquire(&dummy_comms[0], -1, 0, &p), NRT_INVALID);
  EXPECT_NE(runtime_log().find("rank -1 is negative"), std::string::npos);

  nccom_export_table_t partial = Script::table();
  partial.neuronSetAffinity = nullptr;
  ASSERT_EQ(nrt_emu_debug_install_table(&partial), NRT_SUCCESS);
  EXPECT_EQ(nrt_emu_proxy_acquire(&dummy_comms[0], 0, 0, &p), NRT_UNINITIALIZED);
  EXPECT_NE(runtime_log().find("libnccom's table has no neuronSetAffinity"), std::string::npos);

  ASSERT_EQ(nrt_emu_debug_install_table(nullptr), NRT_SUCCESS);
  EXPECT_EQ(nrt_emu_proxy_acquire(&dummy_comms[0], 0, 0, &p), NRT_UNINITIALIZED);
  EXPECT_NE(runtime_log().find("libnccom is not loaded"), std::string::npos);
  EXPECT_EQ(nrt_emu_proxy_worker_count(), 0);
  nrt_emu_proxy_release(nullptr);  // harmless
}

TEST_F(EmuProxyQueue, ManyCommsAcquireAndReleaseConcurrentlyWithoutLeaks) {
  ScopedEnv per_proxy("NEURON_RT_RANKS_PER_NETWORK_PROXY", "4");
  std::vector<std::thread> threads;
  std::vector<int> ok(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t, &ok] {
      for (int round = 0; round < 20; ++round) {
        nrt_emu_proxy_t* p = nullptr;
        if (nrt_emu_proxy_acquire(&dummy_comms[t], t, 0, &p) != NRT_SUCCESS) return;
        if (nrt_emu_proxy_group(p) != t / 4) return;
        nrt_emu_proxy_release(p);
      }
      ok[t] = 1;
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(ok[t], 1) << "thread " << t;
}

}  // namespace
}  // namespace emu_proxy_test
