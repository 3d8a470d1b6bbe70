#include "socket_worker.h"

#include "socket_config.h"
#include "socket_log.h"

#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <new>
#include <system_error>

namespace nccom::socket {
namespace {

constexpr int kPollTimeoutMs = 500;  // a safety net only: wake-ups use the eventfd
constexpr size_t kMaxSocketsPerWorker = kMaxNsocksPerThread;
constexpr size_t kBytesPerTurn = 4 << 20;
// The caller's turn is shorter: its test() call should return soon.
constexpr size_t kAssistBytes = 512 << 10;
constexpr std::chrono::nanoseconds kAssistGrace = std::chrono::milliseconds(1);

int64_t now_ns() { return std::chrono::steady_clock::now().time_since_epoch().count(); }

void finish_chunk(const Chunk& c) {
  c.completion->chunks_left.fetch_sub(1, std::memory_order_acq_rel);
}

void fail_chunk(const Chunk& c, ncclResult_t code) {
  c.completion->fail(code);
  finish_chunk(c);
}

}  // namespace

long usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
  return CPU_COUNT(&set);
}

DataWorker::DataWorker(bool sending, std::vector<int> fds, ControlHook* control)
    : sending_(sending), control_(control), socks_(fds.size()), incoming_(fds.size()) {
  for (size_t i = 0; i < fds.size(); ++i) socks_[i].fd = fds[i];
}

ncclResult_t DataWorker::start() {
  wake_.reset(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!wake_.valid()) {
    SOCK_WARN("eventfd failed: %s", strerror(errno));
    return ncclSystemError;
  }
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error& e) {
    SOCK_WARN("cannot start a helper thread: %s", e.what());
    return ncclSystemError;
  }
  return ncclSuccess;
}

void DataWorker::enqueue(size_t local, Chunk chunk) {
  if (lost_.load(std::memory_order_acquire)) {  // nobody would move it
    fail_chunk(chunk, ncclSystemError);
    return;
  }
  pending_.fetch_add(1, std::memory_order_relaxed);  // before a worker can finish it
  {
    std::lock_guard<std::mutex> lock(mutex_);
    incoming_[local].push_back(chunk);
  }
  // An assisting caller takes the chunk itself; if it stops, the worker
  // looks at its queues when the grace ends anyway.
  int unused;
  if (!caller_assisting(&unused)) wake();
}

bool DataWorker::caller_assisting(int* recheck_ms) const {
  const int64_t since = now_ns() - assisted_ns_.load(std::memory_order_relaxed);
  if (since >= kAssistGrace.count()) return false;
  const int64_t left_ns = kAssistGrace.count() - since;
  *recheck_ms = static_cast<int>((left_ns + 999999) / 1000000);
  return true;
}

bool DataWorker::assist() {
  // Nothing queued (enqueue counts before it publishes): no lock to take. A
  // chunk queued after this load is taken by the next assist, or by the
  // worker. Only an assist that moves the sockets makes the worker step
  // aside, so the worker is never kept away from bytes nobody else moves.
  if (pending_.load(std::memory_order_relaxed) <= 0) return false;
  std::unique_lock<std::mutex> io(io_mutex_, std::try_to_lock);
  if (!io.owns_lock()) return false;  // the worker is at it
  assisted_ns_.store(now_ns(), std::memory_order_relaxed);
  drain_incoming();
  bool moved = false;
  for (size_t i = 0; i < socks_.size(); ++i) moved |= progress(i, kAssistBytes);
  return moved;
}

void DataWorker::wake() {
  uint64_t one = 1;
  // A full counter (impossible in practice) still leaves the fd readable.
  (void)!write(wake_.get(), &one, sizeof one);
}

void DataWorker::stop() {
  if (!thread_.joinable()) return;
  stop_.store(true, std::memory_order_release);
  wake();
  thread_.join();
}

void DataWorker::take_incoming() {
  uint64_t count;
  (void)!read(wake_.get(), &count, sizeof count);
  drain_incoming();
}

void DataWorker::drain_incoming() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t i = 0; i < socks_.size(); ++i) {
    for (const Chunk& c : incoming_[i]) {
      if (socks_[i].error != ncclSuccess) {
        fail_chunk(c, static_cast<ncclResult_t>(socks_[i].error));
        pending_.fetch_sub(1, std::memory_order_relaxed);
      } else {
        socks_[i].queue.push_back(c);
      }
    }
    incoming_[i].clear();
  }
}

void DataWorker::fail_socket(size_t index, ncclResult_t code, const char* what, int err) {
  Socket& s = socks_[index];
  SOCK_WARN("data socket %zu (fd %d) %s: %s; failing %zu pending chunk(s)", index, s.fd, what,
            err != 0 ? strerror(err) : "connection closed by peer", s.queue.size());
  s.error = code;
  for (const Chunk& c : s.queue) fail_chunk(c, code);
  pending_.fetch_sub(static_cast<int>(s.queue.size()), std::memory_order_relaxed);
  s.queue.clear();
  s.front_done = 0;
}

// Moves as many bytes as the socket takes now. True if anything moved.
bool DataWorker::progress(size_t index, size_t budget) {
  Socket& s = socks_[index];
  bool moved = false;
  while (!s.queue.empty()) {
    const Chunk& c = s.queue.front();
    size_t before = s.front_done;
    int err = 0;
    // A bounded turn, so that the other sockets and stop() get their chance.
    size_t limit = std::min(c.len, s.front_done + budget);
    IoStatus st = sending_ ? send_some(s.fd, c.ptr, limit, &s.front_done, &err)
                           : recv_some(s.fd, c.ptr, limit, &s.front_done, &err);
    moved |= s.front_done != before;
    if (st == IoStatus::kDone && s.front_done < c.len) break;  // the turn's budget is spent
    if (st == IoStatus::kDone) {
      finish_chunk(c);
      pending_.fetch_sub(1, std::memory_order_relaxed);
      s.queue.pop_front();
      s.front_done = 0;
      moved = true;
    } else if (st == IoStatus::kAgain) {
      break;
    } else {
      bool peer_gone = st == IoStatus::kClosed || err == EPIPE || err == ECONNRESET;
      fail_socket(index, peer_gone ? ncclRemoteError : ncclSystemError,
                  sending_ ? "send failed" : "receive failed", err);
      return true;
    }
  }
  return moved;
}

void DataWorker::wait_for_io(std::unique_lock<std::mutex>& io, int assist_recheck_ms) {
  pollfd fds[2 + kMaxSocketsPerWorker];
  nfds_t n = 0;
  fds[n++] = {wake_.get(), POLLIN, 0};
  int timeout_ms = kPollTimeoutMs;
  if (control_ != nullptr) {
    int fd = -1, recheck_ms = -1;
    if (short events = control_->control_events(&fd, &recheck_ms); events != 0) {
      fds[n++] = {fd, events, 0};
    }
    // The caller is progressing it; look again then.
    if (recheck_ms >= 0) timeout_ms = std::min(timeout_ms, recheck_ms);
  }
  if (assist_recheck_ms >= 0) {
    // The caller moves the data sockets' bytes; look again when its grace ends.
    timeout_ms = std::min(timeout_ms, assist_recheck_ms);
  } else {
    for (const Socket& s : socks_) {
      if (s.queue.empty() || n >= sizeof fds / sizeof fds[0]) continue;
      fds[n++] = {s.fd, static_cast<short>(sending_ ? POLLOUT : POLLIN), 0};
    }
  }
  // Not over the wait: an assisting caller may take the sockets meanwhile.
  io.unlock();
  // Errors and hang-ups show up as POLLERR/POLLHUP; the next progress() names them.
  (void)poll(fds, n, timeout_ms);
}

void DataWorker::run() {
  try {
    loop();
  } catch (const std::exception& e) {
    // An allocation failed (a queue grew): no exception may reach the
    // thread's top. Every chunk of this worker's sockets fails, and so does
    // every later one.
    std::unique_lock<std::mutex> io(io_mutex_);
    lost_.store(true, std::memory_order_release);
    SOCK_WARN("a helper thread stopped (%s); its connections fail",
              dynamic_cast<const std::bad_alloc*>(&e) != nullptr ? "out of memory" : e.what());
    for (size_t i = 0; i < socks_.size(); ++i) {
      if (socks_[i].error == ncclSuccess)
        fail_socket(i, ncclSystemError, "lost its helper thread", ENOMEM);
    }
    drain_incoming();  // every socket failed: fails what waits, allocates nothing
  }
}

void DataWorker::loop() {
  while (!stop_.load(std::memory_order_acquire)) {
    bool moved = control_ != nullptr && control_->progress_control();
    std::unique_lock<std::mutex> io(io_mutex_);
    take_incoming();
    int recheck_ms = -1;  // set only while the caller assists
    if (!caller_assisting(&recheck_ms)) {
      for (size_t i = 0; i < socks_.size(); ++i) moved |= progress(i, kBytesPerTurn);
    }
    // wait_for_io reads the queues under the lock and releases it for the poll.
    if (!moved) wait_for_io(io, recheck_ms);
  }
}

}  // namespace nccom::socket
