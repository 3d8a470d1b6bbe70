#include "socket_comm.h"

#include "socket_log.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace nccom::socket {

Comm::Comm(uint32_t marker, bool sending, Fd ctrl, std::vector<Fd> data, int nsocks_per_thread,
           std::string peer)
    : head_{marker, this},
      peer_(std::move(peer)),
      sending_(sending),
      ctrl_(std::move(ctrl)),
      data_(std::move(data)),
      nsocks_per_thread_(nsocks_per_thread) {
  for (Request& r : requests_) r.comm = this;
}

Comm::~Comm() {
  head_.marker = 0;
  stop_workers();  // normally done already by the derived destructor
  for (Request& r : requests_) r.marker = 0;
}

void Comm::stop_workers() {
  // Threads first: they may be inside send/recv on the data sockets.
  for (auto& w : workers_) w->stop();
  workers_.clear();
}

short Comm::control_events(int* fd, int* recheck_ms) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (ctrl_error_ != ncclSuccess) return 0;
  // A caller that called in within kCallerGrace reads what arrives itself
  // (its isend/irecv/test progress the control socket): waking helper 0 for
  // every record as well costs a thread hand-off per message on busy cores.
  // Bytes waiting to go out are still the helper's to flush.
  const int64_t idle_ns = std::chrono::steady_clock::now().time_since_epoch().count() -
                          caller_ns_.load(std::memory_order_relaxed);
  *fd = ctrl_.get();
  if (idle_ns >= 0 && idle_ns < kCallerGrace.count() && ctrl_out_done_ == ctrl_out_.size() &&
      !helper_reads_control()) {
    *recheck_ms = static_cast<int>((kCallerGrace.count() - idle_ns) / 1000000 + 1);
    // Only the peer's close: the caller's isend does not read the control
    // socket, so a send to a peer that is gone would otherwise complete into
    // the kernel's buffer until a test happened to read the end of stream.
    return POLLRDHUP;
  }
  return static_cast<short>(POLLIN | (ctrl_out_done_ < ctrl_out_.size() ? POLLOUT : 0));
}

void Comm::caller_active() {
  caller_ns_.store(std::chrono::steady_clock::now().time_since_epoch().count(),
                   std::memory_order_relaxed);
}

void Comm::caller_progress_ctrl() {
  caller_active();
  progress_ctrl();
}

void Comm::push_ctrl() {
  if (ctrl_error_ == ncclSuccess && flush_ctrl() && ctrl_out_done_ < ctrl_out_.size() &&
      !workers_.empty())
    workers_[0]->wake();
}

bool Comm::progress_control() {
  std::lock_guard<std::mutex> lock(mutex_);
  ctrl_moved_ = false;
  progress_ctrl();
  return ctrl_moved_;
}

Comm* Comm::from_handle(void* handle, uint32_t marker) {
  auto* head = static_cast<CommHead*>(handle);
  return head != nullptr && head->marker == marker ? head->owner : nullptr;
}

Request* Comm::request_from_handle(void* handle) {
  auto* req = static_cast<Request*>(handle);
  return req != nullptr && req->marker == kRequestMarker ? req : nullptr;
}

ncclResult_t Comm::start_workers() {
  size_t nthreads = data_.size() / nsocks_per_thread_;
  for (size_t t = 0; t < nthreads; ++t) {
    std::vector<int> fds;
    for (int i = 0; i < nsocks_per_thread_; ++i)
      fds.push_back(data_[t * nsocks_per_thread_ + i].get());
    ControlHook* control = t == 0 ? static_cast<ControlHook*>(this) : nullptr;
    workers_.push_back(std::make_unique<DataWorker>(sending_, std::move(fds), control));
  }
  // Worker 0 last: once it runs it may queue chunks on any other worker.
  for (size_t t = nthreads; t-- > 0;)
    if (ncclResult_t rc = workers_[t]->start(); rc != ncclSuccess) return rc;
  const long cpus = usable_cpus();
  assisted_ = assisted_workers(nthreads, cpus);
  if (nthreads > 1) {
    SOCK_INFO(
        "%s %s: %zu helper threads on %ld usable CPUs; the caller's tests move the "
        "sockets of %zu of them",
        sending_ ? "send comm to" : "receive comm from", peer_.c_str(), nthreads, cpus, assisted_);
  }
  return ncclSuccess;
}

Request* Comm::alloc_request() {
  for (size_t i = 0; i < requests_.size(); ++i) {
    Request& r = requests_[(next_free_ + i) % requests_.size()];
    if (r.state != Request::State::kFree) continue;
    next_free_ = (next_free_ + i + 1) % requests_.size();
    r.bytes = 0;
    r.completion.chunks_left.store(0, std::memory_order_relaxed);
    r.completion.error.store(ncclSuccess, std::memory_order_relaxed);
    return &r;
  }
  return nullptr;
}

void Comm::release(Request* req) { req->state = Request::State::kFree; }

void Comm::schedule(Request* req, size_t size) {
  req->state = Request::State::kActive;
  if (size == 0) return;
  size_t nsocks = data_.size();
  size_t chunk = size;
  if (nsocks > 1 && size > kStripeThreshold)
    chunk = std::max(kStripeThreshold, (size + nsocks - 1) / nsocks);
  size_t count = (size + chunk - 1) / chunk;
  // Counted before the first chunk is visible to a worker.
  req->completion.chunks_left.store(static_cast<int>(count), std::memory_order_release);
  for (size_t off = 0; off < size; off += chunk) {
    size_t sock = next_socket_++ % nsocks;
    Chunk c{req->data + off, std::min(chunk, size - off), &req->completion};
    workers_[sock / nsocks_per_thread_]->enqueue(sock % nsocks_per_thread_, c);
  }
}

void Comm::queue_ctrl(const CtrlMsg& msg) { queue_ctrl_bytes(&msg, sizeof msg); }

void Comm::queue_ctrl_bytes(const void* data, size_t len) {
  ctrl_out_.append(static_cast<const char*>(data), len);
  ctrl_queued_total_ += len;
}

void Comm::begin_payload(char* dst, size_t len) {
  in_payload_ = true;
  in_dst_ = dst;
  in_len_ = len;
  in_done_ = 0;
}

void Comm::ctrl_failed(ncclResult_t code, const char* what, int err) {
  ctrl_error_ = code;
  int failed = on_ctrl_failure(code);
  const char* why = err != 0                  ? strerror(err)
                    : code == ncclRemoteError ? "connection closed by peer"
                                              : "protocol error";
  if (failed > 0) {
    SOCK_WARN("control connection to %s %s (%s); %d pending request(s) failed", peer_.c_str(), what,
              why, failed);
  } else {
    SOCK_TRACE("control connection to %s %s (%s)", peer_.c_str(), what, why);
  }
}

// False once the control socket failed.
bool Comm::flush_ctrl() {
  if (ctrl_out_done_ == ctrl_out_.size()) return true;
  int err = 0;
  size_t before = ctrl_out_done_;
  IoStatus st = send_some(ctrl_.get(), ctrl_out_.data(), ctrl_out_.size(), &ctrl_out_done_, &err);
  ctrl_moved_ |= ctrl_out_done_ != before;
  ctrl_sent_total_ += ctrl_out_done_ - before;
  if (st == IoStatus::kDone) {
    ctrl_out_.clear();
    ctrl_out_done_ = 0;
  } else if (st == IoStatus::kAgain) {
    // A stream that never drains completely must not keep its sent prefix
    // forever (eager payloads make the records larger).
    if (ctrl_out_done_ >= kStripeThreshold && ctrl_out_done_ * 2 >= ctrl_out_.size()) {
      ctrl_out_.erase(0, ctrl_out_done_);
      ctrl_out_done_ = 0;
    }
  } else {
    bool peer_gone = err == EPIPE || err == ECONNRESET;
    ctrl_failed(peer_gone ? ncclRemoteError : ncclSystemError, "send failed", err);
    return false;
  }
  return true;
}

bool Comm::parse_ctrl() {
  for (;;) {
    const size_t held = in_end_ - in_begin_;
    if (in_payload_) {
      const size_t take = std::min(held, in_len_ - in_done_);
      if (take > 0) memcpy(in_dst_ + in_done_, in_buf_.get() + in_begin_, take);
      in_begin_ += take;
      in_done_ += take;
      if (in_done_ < in_len_) return true;
      in_payload_ = false;
      on_payload();
      continue;
    }
    if (held < sizeof(CtrlMsg)) return true;
    CtrlMsg msg;
    memcpy(&msg, in_buf_.get() + in_begin_, sizeof msg);
    in_begin_ += sizeof msg;
    if (ncclResult_t rc = on_message(msg); rc != ncclSuccess) {
      // Always worth a warning, pending requests or not: the peer broke the protocol.
      SOCK_WARN("%s sent an unexpected control record (type %u, tag %d, id %lu, value %lu)",
                peer_.c_str(), msg.type, msg.tag, static_cast<unsigned long>(msg.id),
                static_cast<unsigned long>(msg.value));
      ctrl_failed(rc, "sent a malformed control record", 0);
      return false;
    }
  }
}

bool Comm::fill_ctrl(bool* drained) {
  if (!in_buf_) in_buf_ = std::make_unique<char[]>(kCtrlReadAhead);
  // parse_ctrl() left less than a record, or nothing while inside a payload.
  if (in_begin_ > 0) {
    memmove(in_buf_.get(), in_buf_.get() + in_begin_, in_end_ - in_begin_);
    in_end_ -= in_begin_;
    in_begin_ = 0;
  }
  // The rest of a payload goes straight to its destination, what follows it
  // into the read-ahead.
  iovec iov[2];
  int count = 0;
  if (in_payload_) iov[count++] = {in_dst_ + in_done_, in_len_ - in_done_};
  iov[count++] = {in_buf_.get() + in_end_, kCtrlReadAhead - in_end_};
  size_t want = 0;
  for (int i = 0; i < count; ++i) want += iov[i].iov_len;
  size_t got = 0;
  int err = 0;
  IoStatus st = recv_once(ctrl_.get(), iov, count, &got, &err);
  if (st == IoStatus::kAgain) return false;
  if (st == IoStatus::kClosed) {
    ctrl_moved_ = true;
    ctrl_failed(ncclRemoteError, "closed", 0);
    return false;
  }
  if (st == IoStatus::kError) {
    bool peer_gone = err == ECONNRESET;
    ctrl_failed(peer_gone ? ncclRemoteError : ncclSystemError, "receive failed", err);
    return false;
  }
  ctrl_moved_ = true;
  // A short read took all the socket had: reading again now would find it
  // empty, one system call for nothing.
  *drained = got < want;
  if (in_payload_) {
    const size_t direct = std::min(got, in_len_ - in_done_);
    in_done_ += direct;
    got -= direct;
  }
  in_end_ += got;
  return true;
}

void Comm::progress_ctrl() {
  if (ctrl_error_ != ncclSuccess || !flush_ctrl()) return;
  bool drained = false;
  while (parse_ctrl() && !drained && fill_ctrl(&drained)) {}
  // Clear-to-sends and credits queued by on_message.
  push_ctrl();
}

ncclResult_t Comm::test(Request* req, int* done, int* size) {
  if (done == nullptr) return ncclInvalidArgument;
  std::lock_guard<std::mutex> lock(mutex_);
  *done = 0;
  if (req->state == Request::State::kFlush) {
    *done = 1;
    if (size != nullptr) *size = 0;
    return ncclSuccess;
  }
  if (req->state == Request::State::kFree) {
    SOCK_WARN("test: request %p is not in flight (already completed?)", static_cast<void*>(req));
    return ncclInvalidArgument;
  }
  caller_active();
  // A request already complete costs no system call; otherwise the control
  // stream moves, and the caller moves the bytes of the first assisted_
  // workers itself while it keeps testing (socket_worker.h): no hand-off per
  // chunk to a thread it competes with for a core.
  const bool complete = req->state == Request::State::kEager
                            ? ctrl_sent_total_ >= req->ctrl_end
                            : req->state == Request::State::kActive &&
                                  req->completion.chunks_left.load(std::memory_order_acquire) == 0;
  if (!complete) {
    progress_ctrl();
    for (size_t t = 0; t < assisted_; ++t) (void)workers_[t]->assist();
  }
  if (req->state == Request::State::kEager) {
    if (ctrl_sent_total_ < req->ctrl_end) return ncclSuccess;
    *done = 1;
    if (size != nullptr) *size = req->bytes;
    release(req);
    return ncclSuccess;
  }
  if (req->state != Request::State::kActive) return ncclSuccess;
  // Acquire: pairs with the worker's release so the payload is visible.
  int left = req->completion.chunks_left.load(std::memory_order_acquire);
  int error = req->completion.error.load(std::memory_order_acquire);
  if (error != ncclSuccess) {
    // Keep the slot while a worker may still hold one of its chunks.
    if (left == 0) release(req);
    return static_cast<ncclResult_t>(error);
  }
  if (left > 0) return ncclSuccess;
  *done = 1;
  if (size != nullptr) *size = req->bytes;
  release(req);
  return ncclSuccess;
}

}  // namespace nccom::socket
