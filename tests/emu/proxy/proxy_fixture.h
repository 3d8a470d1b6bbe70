// The fixture shared by the proxy suites: installs the scripted table,
// resets the script and checks that no worker thread outlives a test.
#pragma once

#include "proxy_script.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

namespace emu_proxy_test {

// Minimal FIFOs: the scripted exports never read them, the runtime only
// checks that they exist.
struct Fifos {
  net_ops_info_t ops[1]{};
  net_src_addr_t src[1]{};
  net_dest_addr_t dst[1]{};
  nrt_emu_proxy_block_t block(uint32_t bb) {
    return nrt_emu_proxy_block_t{bb, ops, 1, src, 1, dst, 1};
  }
};

class ProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    threads_before_ = thread_count();
    Script::get().reset();
    const nccom_export_table_t table = Script::table();
    ASSERT_EQ(nrt_emu_debug_install_table(&table), NRT_SUCCESS);
    nrt_emu_log_clear();
  }
  void TearDown() override {
    EXPECT_EQ(nrt_emu_proxy_worker_count(), 0) << "a proxy worker outlived the test";
    // A joined thread can still be listed for a moment: the kernel wakes the
    // joiner (it clears the thread id) before it removes the task. A thread
    // that leaked stays listed past the bound (generous: on a loaded machine
    // the exiting thread may wait for a CPU).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (thread_count() != threads_before_ && std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
    EXPECT_EQ(thread_count(), threads_before_) << "threads leaked (/proc/self/task)";
    nrt_emu_debug_install_table(nullptr);
  }

  // Polls the published run state (yielding, bounded): the worker publishes
  // every transition, so this observes a state without sleeping.
  static bool reaches(const nrt_emu_proxy_status_t* s, nrt_emu_task_run_state_t want) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (nrt_emu_proxy_run_state(s) != want) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::yield();
    }
    return true;
  }

  static nrt_emu_network_task_t task_of(const nrt_emu_proxy_stream_t* streams, int n,
                                        uint64_t exec_id) {
    nrt_emu_network_task_t t{};
    t.streams = streams;
    t.streams_n = n;
    t.exec_id = exec_id;
    return t;
  }

  int threads_before_ = 0;
};

constexpr uint32_t kWaitMs = 10000;  // generous: only reached when something is broken

}  // namespace emu_proxy_test
