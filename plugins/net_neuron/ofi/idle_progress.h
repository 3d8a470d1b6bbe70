// The idle-progress thread (docs/internals/net-ofi.md and docs/decisions/net-ofi.md,
// "Progress across comms").
//
// With manual-progress providers (tcp;ofi_rxm, shm) an RMA moves only while
// the *target's* endpoint is progressed. While the process calls test() on
// any request, test() takes care of that (round-robin over the comms). A
// process that calls nothing — its own work finished, it waits in a barrier
// elsewhere — would leave a peer's read from one of its comms pending
// forever. This thread covers exactly that case: it wakes every kPeriod and,
// only if no test() ran since its last wake-up, runs one pass (the plugin's
// try-lock progress of every send/recv comm). A busy process pays one
// relaxed atomic increment per test() and 1/kPeriod wake-ups per second.
//
// Header-only on purpose: it is small, and the plugin's source list lives in
// a file this component shares.
#pragma once

#include "common.h"

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace nccom::ofi {

class IdleProgress {
 public:
  static constexpr std::chrono::milliseconds kPeriod{2};

  IdleProgress() : state_(std::make_shared<State>()) {}
  ~IdleProgress() { stop(); }
  IdleProgress(const IdleProgress&) = delete;
  IdleProgress& operator=(const IdleProgress&) = delete;

  bool running() const { return thread_.joinable(); }

  // Starts the thread once; `pass` runs on it while the process is idle.
  void start(std::function<void()> pass) {
    if (thread_.joinable()) return;
    {
      std::lock_guard lock(state_->mutex);
      state_->stop = false;
    }
    // The thread takes no signals (it inherits a full mask): a handler that
    // calls exit() must not run on it and then wait for it to end.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    thread_ = std::thread([state = state_, activity = &activity_, pass = std::move(pass)] {
      run(*state, *activity, pass);
    });
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  }

  // Stops and joins the thread (a pass in progress finishes first).
  void stop() {
    if (!thread_.joinable()) return;
    request_stop();
    thread_.join();
  }

  // At process exit with a plugin call still running (see ~Plugin): a pass
  // could be blocked on a provider lock that the interrupted call holds, so
  // joining could hang exit. Stop it, join only when no pass is running,
  // otherwise leave it to the process's end.
  void stop_at_exit() {
    if (!thread_.joinable()) return;
    const bool in_pass = request_stop();
    if (in_pass) {
      thread_.detach();
    } else {
      thread_.join();
    }
  }

  // Every test(): the process is not idle.
  void note_activity() { activity_.fetch_add(1, std::memory_order_relaxed); }

 private:
  struct State {
    std::mutex mutex;
    std::condition_variable wake;
    bool stop = false;
    bool in_pass = false;
  };

  // True when a pass is running right now (it sees `stop` when it ends).
  bool request_stop() {
    std::lock_guard lock(state_->mutex);
    state_->stop = true;
    state_->wake.notify_all();
    return state_->in_pass;
  }

  static void run(State& state, const std::atomic<uint64_t>& activity,
                  const std::function<void()>& pass) {
    uint64_t seen = activity.load(std::memory_order_relaxed);
    std::unique_lock lock(state.mutex);
    while (!state.stop) {
      state.wake.wait_for(lock, kPeriod);
      if (state.stop) break;
      const uint64_t now = activity.load(std::memory_order_relaxed);
      if (now != seen) {  // test() ran meanwhile: it progresses the comms itself
        seen = now;
        continue;
      }
      state.in_pass = true;
      lock.unlock();
      bool passed = true;
      try {
        pass();
      } catch (const std::exception& e) {
        // No exception may reach the thread's top; test() still progresses
        // every comm, so only the idle help ends.
        OFI_WARN("NET/OFI the idle progress thread stopped (%s); test() alone progresses the comms",
                 e.what());
        passed = false;
      }
      lock.lock();
      state.in_pass = false;
      if (!passed) break;
    }
  }

  std::shared_ptr<State> state_;
  // Not in State: a trivially destructible member of the plugin's static
  // object, so a test() racing with exit-time destruction touches no freed
  // memory here.
  std::atomic<uint64_t> activity_{0};
  std::thread thread_;
};

}  // namespace nccom::ofi
