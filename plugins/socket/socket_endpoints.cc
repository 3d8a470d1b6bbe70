// The two ends of a comm: SendComm (isend, clear-to-send and credit
// handling) and RecvComm (irecv, tag matching, iflush; its eager half is in
// socket_eager.cc). See socket_comm.h for the protocol.
#include "socket_comm.h"
#include "socket_log.h"

#include <algorithm>
#include <climits>

namespace nccom::socket {
// ---- SendComm -------------------------------------------------------------

ncclResult_t SendComm::create(Fd ctrl, std::vector<Fd> data, int nsocks_per_thread,
                              std::string peer, SendComm** out) {
  std::unique_ptr<SendComm> comm(new SendComm(kSendCommMarker, /*sending=*/true, std::move(ctrl),
                                              std::move(data), nsocks_per_thread, std::move(peer)));
  if (ncclResult_t rc = comm->start_workers(); rc != ncclSuccess) return rc;
  *out = comm.release();
  return ncclSuccess;
}

ncclResult_t SendComm::isend(void* data, int size, int tag, void** request) {
  if (request == nullptr || size < 0 || (size > 0 && data == nullptr)) {
    SOCK_WARN("isend: bad arguments (data %p, size %d, request %p)", data, size,
              static_cast<void*>(request));
    return ncclInvalidArgument;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  // The grant and the credits come back on the control stream: it is read
  // first only when they decide the path, i.e. no credit is known to be left.
  auto eager = [&] { return static_cast<size_t>(size) <= eager_max_ && credits_ > 0; };
  if (eager()) {
    caller_active();
  } else {
    caller_progress_ctrl();
  }
  if (ctrl_error_ != ncclSuccess) return ctrl_error_;  // the peer is gone; logged when found
  Request* req = alloc_request();
  *request = req;
  if (req == nullptr) return ncclSuccess;  // back-pressure: retry later
  req->state = Request::State::kPosted;
  req->data = static_cast<char*>(data);
  req->size = size;
  req->bytes = size;
  req->tag = tag;
  req->id = next_id_++;
  if (eager()) {
    send_eager(req);
  } else {
    queue_ctrl(CtrlMsg{kMsgHeader, tag, req->id, static_cast<uint64_t>(size)});
  }
  // Nothing to read yet: an answer to this message cannot have come back.
  push_ctrl();
  return ncclSuccess;
}

// Record and payload join the control stream (copied: the caller's buffer is
// not looked at again); the send is done once the kernel took them.
void SendComm::send_eager(Request* req) {
  --credits_;
  req->state = Request::State::kEager;
  queue_ctrl(CtrlMsg{kMsgEager, req->tag, req->id, static_cast<uint64_t>(req->size)});
  queue_ctrl_bytes(req->data, static_cast<size_t>(req->size));
  req->ctrl_end = ctrl_queued();
}

ncclResult_t SendComm::on_grant(const CtrlMsg& msg) {
  // Once, and never more than this build offered in its hello.
  if (granted_ || msg.id > kEagerMaxBytes || msg.value > static_cast<uint64_t>(kEagerCredits))
    return ncclInternalError;
  granted_ = true;
  eager_max_ = msg.id;
  eager_credits_ = credits_ = static_cast<int>(msg.value);
  SOCK_TRACE("%s: eager path granted (messages up to %zu bytes, %d credits)", peer_.c_str(),
             eager_max_, eager_credits_);
  return ncclSuccess;
}

ncclResult_t SendComm::on_message(const CtrlMsg& msg) {
  switch (msg.type) {
    case kMsgClearToSend: break;
    case kMsgEagerGrant: return on_grant(msg);
    case kMsgCredit:
      // Never more back than are out.
      if (msg.value == 0 || msg.value > static_cast<uint64_t>(eager_credits_ - credits_))
        return ncclInternalError;
      credits_ += static_cast<int>(msg.value);
      return ncclSuccess;
    case kMsgEagerDropped:
      if (!granted_ || msg.id >= next_id_) return ncclInternalError;
      SOCK_WARN(
          "%s dropped eager message %lu (%lu bytes, tag %d): its receive buffer is smaller; the "
          "send had completed already, the receive failed",
          peer_.c_str(), static_cast<unsigned long>(msg.id), static_cast<unsigned long>(msg.value),
          msg.tag);
      return ncclSuccess;
    default: return ncclInternalError;
  }
  auto it = std::find_if(requests_.begin(), requests_.end(), [&](const Request& r) {
    return r.state == Request::State::kPosted && r.id == msg.id;
  });
  if (it == requests_.end()) return ncclInternalError;
  Request* req = &*it;
  if (msg.value == kCtsAccept) {
    schedule(req, static_cast<size_t>(req->size));
    return ncclSuccess;
  }
  if (msg.value != kCtsTooLarge) return ncclInternalError;
  SOCK_WARN("%s refused message %lu (%d bytes, tag %d): its receive buffer is smaller",
            peer_.c_str(), static_cast<unsigned long>(req->id), req->size, req->tag);
  req->completion.fail(ncclRemoteError);
  req->state = Request::State::kActive;
  return ncclSuccess;
}

// A rendezvous send waiting for its clear-to-send: helper 0 answers it at
// once by queueing the payload, as before the caller-driven control path
// (otherwise a large stream waits for the caller's next test per message).
bool SendComm::helper_reads_control() const {
  return std::any_of(requests_.begin(), requests_.end(),
                     [](const Request& r) { return r.state == Request::State::kPosted; });
}

int SendComm::on_ctrl_failure(ncclResult_t code) {
  int failed = 0;
  for (Request& r : requests_) {
    // Eager sends whose bytes the kernel took have completed; the rest fail.
    bool unsent_eager = r.state == Request::State::kEager && r.ctrl_end > ctrl_sent();
    if (r.state != Request::State::kPosted && !unsent_eager) continue;
    r.completion.fail(code);
    r.state = Request::State::kActive;
    ++failed;
  }
  return failed;
}

// ---- RecvComm -------------------------------------------------------------

ncclResult_t RecvComm::create(Fd ctrl, std::vector<Fd> data, int nsocks_per_thread,
                              std::string peer, EagerOffer offer, RecvComm** out) {
  std::unique_ptr<RecvComm> comm(new RecvComm(kRecvCommMarker, /*sending=*/false, std::move(ctrl),
                                              std::move(data), nsocks_per_thread, std::move(peer)));
  comm->grant(offer);  // before the workers run: the grant is the first record
  if (ncclResult_t rc = comm->start_workers(); rc != ncclSuccess) return rc;
  *out = comm.release();
  return ncclSuccess;
}

ncclResult_t RecvComm::irecv(void* data, int size, int tag, void** request) {
  if (request == nullptr || size < 0 || (size > 0 && data == nullptr)) {
    SOCK_WARN("irecv: bad arguments (data %p, size %d, request %p)", data, size,
              static_cast<void*>(request));
    return ncclInvalidArgument;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  // Not read here: a message still in the socket is matched when a test
  // reads it, straight into this receive's buffer.
  caller_active();
  if (ctrl_error_ != ncclSuccess) return ctrl_error_;
  Request* req = alloc_request();
  *request = req;
  if (req == nullptr) return ncclSuccess;  // back-pressure: retry later
  req->state = Request::State::kPosted;
  req->data = static_cast<char*>(data);
  req->size = size;
  req->tag = tag;
  auto it = std::find_if(unexpected_.begin(), unexpected_.end(),
                         [&](const Arrived& a) { return a.header.tag == tag; });
  if (it != unexpected_.end()) {
    Arrived arrived = std::move(*it);
    unexpected_.erase(it);
    if (arrived.eager) {
      match_held(req, arrived);
    } else {
      --unexpected_headers_;
      match(req, arrived.header);
    }
    push_ctrl();  // the clear-to-send or the credit
  } else {
    posted_.push_back(req);
  }
  return ncclSuccess;
}

ncclResult_t RecvComm::iflush(void** request) {
  if (request == nullptr) return ncclInvalidArgument;
  std::lock_guard<std::mutex> lock(mutex_);
  flush_request_.comm = this;
  flush_request_.state = Request::State::kFlush;
  *request = &flush_request_;  // host memory: nothing to flush
  return ncclSuccess;
}

void RecvComm::match(Request* req, const CtrlMsg& header) {
  req->id = header.id;
  if (header.value > static_cast<uint64_t>(req->size)) {
    SOCK_WARN("message %lu from %s (tag %d) has %lu bytes; the receive buffer only %d",
              static_cast<unsigned long>(header.id), peer_.c_str(), header.tag,
              static_cast<unsigned long>(header.value), req->size);
    queue_ctrl(CtrlMsg{kMsgClearToSend, header.tag, header.id, kCtsTooLarge});
    req->completion.fail(ncclInternalError);
    req->state = Request::State::kActive;
    return;
  }
  req->bytes = static_cast<int>(header.value);
  queue_ctrl(CtrlMsg{kMsgClearToSend, header.tag, header.id, kCtsAccept});
  schedule(req, header.value);
}

std::deque<Request*>::iterator RecvComm::posted_with_tag(int tag) {
  return std::find_if(posted_.begin(), posted_.end(),
                      [&](const Request* r) { return r->tag == tag; });
}

ncclResult_t RecvComm::on_message(const CtrlMsg& msg) {
  // Messages come in the sender's order.
  if ((msg.type != kMsgHeader && msg.type != kMsgEager) || msg.id != expected_id_ ||
      msg.value > INT_MAX)
    return ncclInternalError;
  if (msg.type == kMsgEager) return on_eager(msg);
  // At most NCCL_NET_MAX_REQUESTS rendezvous headers wait: each holds a send request.
  if (unexpected_headers_ >= NCCL_NET_MAX_REQUESTS) return ncclInternalError;
  ++expected_id_;
  auto it = posted_with_tag(msg.tag);
  if (it == posted_.end()) {
    unexpected_.push_back(Arrived{msg, false, {}});
    ++unexpected_headers_;
    return ncclSuccess;
  }
  Request* req = *it;
  posted_.erase(it);
  match(req, msg);
  return ncclSuccess;
}

int RecvComm::on_ctrl_failure(ncclResult_t code) {
  int failed = static_cast<int>(posted_.size());
  for (Request* r : posted_) {
    r->completion.fail(code);
    r->state = Request::State::kActive;
  }
  posted_.clear();
  // Eager payloads of a dead peer are dropped with it: later receives fail.
  unexpected_.clear();
  unexpected_headers_ = 0;
  if (eager_in_.target != nullptr) {
    eager_in_.target->completion.fail(code);
    eager_in_.target->completion.chunks_left.store(0, std::memory_order_release);
    eager_in_.target = nullptr;
    ++failed;
  }
  eager_in_.held.clear();
  return failed;
}

}  // namespace nccom::socket
