// Helper threads: each DataWorker owns one thread that moves the bytes of its
// share of a comm's data sockets (nsocks_per_thread of them). The caller's
// thread queues chunks; the worker sends or receives them in queue order per
// socket with non-blocking I/O and poll(), and reports each finished chunk
// through the request's Completion.
//
// The caller may move a worker's bytes itself (assist(), from test): a
// caller that spins on test, as a proxy does, then does the I/O on its own
// time instead of handing every chunk to a thread that competes with it for
// a core. While assists keep coming (within kAssistGrace of each other) the
// worker leaves its data sockets to the caller; once they stop it takes
// over again within that grace.
//
// Which workers the caller assists (assisted_workers): worker 0 while the
// process has a core for the caller and for each helper thread — then the
// other helpers move their sockets in parallel with it; every worker when it
// has not — then a helper that wants a core only takes it from the caller or
// from the peer's caller on a shared host, and one thread moving every socket
// in turn, as iperf3 -P does, is faster.
#pragma once

#include "socket_io.h"

#include <nccom/net_common.h>

#include <atomic>
#include <cstddef>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace nccom::socket {

// Progress of one request, shared between the caller's thread and workers.
struct Completion {
  std::atomic<int> chunks_left{0};
  std::atomic<int> error{ncclSuccess};  // first failure wins

  void fail(ncclResult_t code) {
    int expected = ncclSuccess;
    error.compare_exchange_strong(expected, code, std::memory_order_acq_rel);
  }
};

// Lets worker 0 of a comm also progress the comm's control socket, so the
// rendezvous, eager payloads and credit returns move on even while the
// caller tests only the other side.
class ControlHook {
 public:
  // The control fd and the poll events it waits for: 0 once it failed; only
  // POLLRDHUP (the peer's close) while the caller's own calls progress the
  // control socket, and then *recheck_ms (if >= 0) says when to ask again.
  virtual short control_events(int* fd, int* recheck_ms) = 0;
  // Moves control bytes; true if anything moved.
  virtual bool progress_control() = 0;

 protected:
  ~ControlHook() = default;
};

// A piece of one message on one data socket.
struct Chunk {
  char* ptr = nullptr;
  size_t len = 0;
  Completion* completion = nullptr;
};

// How many of a comm's `nthreads` workers (the first ones) its caller's tests
// assist, given the CPUs the process may run on (0 or less: unknown).
inline size_t assisted_workers(size_t nthreads, long cpus) {
  if (nthreads == 0) return 0;
  if (cpus <= 0 || static_cast<size_t>(cpus) > nthreads) return 1;
  return nthreads;
}

// The CPUs the calling thread may run on (sched_getaffinity); 0 if unknown.
long usable_cpus();

class DataWorker {
 public:
  // `fds` are borrowed: the comm owns and closes them after stop().
  DataWorker(bool sending, std::vector<int> fds, ControlHook* control = nullptr);
  ~DataWorker() { stop(); }
  DataWorker(const DataWorker&) = delete;
  DataWorker& operator=(const DataWorker&) = delete;

  // Creates the wake-up eventfd and the thread.
  ncclResult_t start();
  // Queues a chunk on socket `local` (0 .. nsocks_per_thread-1).
  void enqueue(size_t local, Chunk chunk);
  // Makes the thread look at its queues and the control socket again.
  void wake();
  // From the caller's thread: moves what the sockets take now, at most
  // kAssistBytes per socket, unless the worker is moving bytes at this
  // moment. True if anything moved (a chunk may have finished).
  bool assist();
  // Stops and joins the thread; queued chunks are dropped. Idempotent.
  void stop();

 private:
  struct Socket {
    int fd = -1;
    std::deque<Chunk> queue;  // worker-private
    size_t front_done = 0;    // bytes of queue.front() already moved
    int error = ncclSuccess;  // set once the socket failed
  };

  void run();
  void loop();
  void take_incoming();
  void drain_incoming();  // under io_mutex_
  bool progress(size_t index, size_t budget);
  // Whether the caller assisted within kAssistGrace; if so *recheck_ms says
  // when that grace ends.
  bool caller_assisting(int* recheck_ms) const;
  void fail_socket(size_t index, ncclResult_t code, const char* what, int err);
  void wait_for_io(std::unique_lock<std::mutex>& io, int assist_recheck_ms);

  const bool sending_;
  ControlHook* const control_;
  std::mutex io_mutex_;                  // socks_: the worker, or an assisting caller
  std::vector<Socket> socks_;            // guarded by io_mutex_ once started
  std::atomic<int64_t> assisted_ns_{0};  // steady_clock ns of the last assist
  std::atomic<int> pending_{0};          // chunks enqueued and not finished
  std::mutex mutex_;
  std::vector<std::deque<Chunk>> incoming_;  // guarded by mutex_
  Fd wake_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> lost_{false};  // the thread ended by an exception
  std::thread thread_;
};

}  // namespace nccom::socket
