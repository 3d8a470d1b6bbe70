// Root — the bootstrap root of one communicator: a listening socket and one
// thread that collects every rank's check-in (directly, or through the
// local leaders of the hierarchical protocol), validates them, and answers
// each with cluster_id, epoch and either its ring successor (flat) or the
// whole address table (leaders). Any inconsistency (duplicate rank, wrong
// rank count, another build, mixed protocols, a rank that never arrives
// before the deadline) fails the whole communicator: every rank that did
// check in receives the same error text, so all fail fast and alike.
#pragma once

#include "bootstrap/socket.h"

#include <nccom/util/result.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace nccom::bootstrap {

struct RootOptions {
  int nranks = 0;
  uint64_t secret = 0;
  std::chrono::milliseconds timeout{120000};  // for the whole handshake
};

class Root {
 public:
  // Takes a bound, listening socket and starts the root thread.
  static Result<std::unique_ptr<Root>> start(Socket listener, const RootOptions& options);
  ~Root();  // waits for the thread, which ends by itself at the deadline at the latest
  Root(const Root&) = delete;
  Root& operator=(const Root&) = delete;

  const SocketAddress& address() const { return address_; }
  // Blocks until the root thread has answered everybody (or failed); returns
  // its outcome. Idempotent.
  Status wait();
  // True once the thread has finished (wait() then returns at once).
  bool finished() const { return done_.load(std::memory_order_acquire); }
  // Waits up to `limit` for the thread to finish; true if it did.
  bool wait_for(std::chrono::milliseconds limit);

 private:
  Root(Socket listener, const RootOptions& options);
  void serve();

  Socket listener_;
  SocketAddress address_;
  RootOptions options_;
  std::thread thread_;
  Status outcome_;
  std::atomic<bool> done_{false};
  std::mutex done_mutex_;
  std::condition_variable done_cv_;
};

}  // namespace nccom::bootstrap
