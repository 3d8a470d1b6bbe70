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
  // Blocks until the root thread has ended; returns its outcome. Idempotent.
  Status wait();
  // True once the root has answered everybody who checked in (or failed).
  bool decided() const { return done_.load(std::memory_order_acquire); }
  // True once the thread has ended (wait() then returns at once). A root
  // that failed the communicator stays up after its verdict, until its
  // deadline or until every rank has been told: a rank that arrives late
  // (restarted, slow to start) gets the verdict instead of a refused
  // connection.
  bool finished() const { return exited_.load(std::memory_order_acquire); }
  // Waits up to `limit` for the verdict; true if it came.
  bool wait_for(std::chrono::milliseconds limit);
  // Ends a root that has decided at once (its listener closes, late ranks
  // are no longer answered); joins the thread. A root still collecting
  // check-ins is left alone (false).
  bool stop_if_decided();

 private:
  Root(Socket listener, const RootOptions& options);
  void serve();

  Socket listener_;
  SocketAddress address_;
  RootOptions options_;
  std::thread thread_;
  Status outcome_;
  std::atomic<bool> done_{false};
  std::atomic<bool> exited_{false};
  int stop_fds_[2] = {-1, -1};  // a pipe: a byte on it ends the linger
  std::mutex done_mutex_;
  std::condition_variable done_cv_;
};

}  // namespace nccom::bootstrap
