// The two ends of a comm: SendComm (isend, clear-to-send handling) and
// RecvComm (irecv, tag matching, iflush). See socket_comm.h for the protocol.
#include <algorithm>
#include <climits>

#include "socket_comm.h"
#include "socket_log.h"

namespace nccom::socket {
// ---- SendComm -------------------------------------------------------------

ncclResult_t SendComm::create(Fd ctrl, std::vector<Fd> data, int nsocks_per_thread,
                              std::string peer, SendComm **out) {
  std::unique_ptr<SendComm> comm(new SendComm(kSendCommMarker, /*sending=*/true, std::move(ctrl),
                                              std::move(data), nsocks_per_thread, std::move(peer)));
  if (ncclResult_t rc = comm->start_workers(); rc != ncclSuccess) return rc;
  *out = comm.release();
  return ncclSuccess;
}

ncclResult_t SendComm::isend(void *data, int size, int tag, void **request) {
  if (request == nullptr || size < 0 || (size > 0 && data == nullptr)) {
    SOCK_WARN("isend: bad arguments (data %p, size %d, request %p)", data, size,
              static_cast<void *>(request));
    return ncclInvalidArgument;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  progress_ctrl();
  if (ctrl_error_ != ncclSuccess) return ctrl_error_;  // the peer is gone; logged when found
  Request *req = alloc_request();
  *request = req;
  if (req == nullptr) return ncclSuccess;  // back-pressure: retry later
  req->state = Request::State::kPosted;
  req->data = static_cast<char *>(data);
  req->size = size;
  req->bytes = size;
  req->tag = tag;
  req->id = next_id_++;
  queue_ctrl(CtrlMsg{kMsgHeader, tag, req->id, static_cast<uint64_t>(size)});
  progress_ctrl();
  return ncclSuccess;
}

ncclResult_t SendComm::on_message(const CtrlMsg &msg) {
  if (msg.type != kMsgClearToSend) return ncclInternalError;
  auto it = std::find_if(requests_.begin(), requests_.end(), [&](const Request &r) {
    return r.state == Request::State::kPosted && r.id == msg.id;
  });
  if (it == requests_.end()) return ncclInternalError;
  Request *req = &*it;
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

int SendComm::on_ctrl_failure(ncclResult_t code) {
  int failed = 0;
  for (Request &r : requests_) {
    if (r.state != Request::State::kPosted) continue;
    r.completion.fail(code);
    r.state = Request::State::kActive;
    ++failed;
  }
  return failed;
}

// ---- RecvComm -------------------------------------------------------------

ncclResult_t RecvComm::create(Fd ctrl, std::vector<Fd> data, int nsocks_per_thread,
                              std::string peer, RecvComm **out) {
  std::unique_ptr<RecvComm> comm(new RecvComm(kRecvCommMarker, /*sending=*/false, std::move(ctrl),
                                              std::move(data), nsocks_per_thread, std::move(peer)));
  if (ncclResult_t rc = comm->start_workers(); rc != ncclSuccess) return rc;
  *out = comm.release();
  return ncclSuccess;
}

ncclResult_t RecvComm::irecv(void *data, int size, int tag, void **request) {
  if (request == nullptr || size < 0 || (size > 0 && data == nullptr)) {
    SOCK_WARN("irecv: bad arguments (data %p, size %d, request %p)", data, size,
              static_cast<void *>(request));
    return ncclInvalidArgument;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  progress_ctrl();
  if (ctrl_error_ != ncclSuccess) return ctrl_error_;
  Request *req = alloc_request();
  *request = req;
  if (req == nullptr) return ncclSuccess;  // back-pressure: retry later
  req->state = Request::State::kPosted;
  req->data = static_cast<char *>(data);
  req->size = size;
  req->tag = tag;
  auto it = std::find_if(unexpected_.begin(), unexpected_.end(),
                         [&](const CtrlMsg &h) { return h.tag == tag; });
  if (it != unexpected_.end()) {
    CtrlMsg header = *it;
    unexpected_.erase(it);
    match(req, header);
    progress_ctrl();
  } else {
    posted_.push_back(req);
  }
  return ncclSuccess;
}

ncclResult_t RecvComm::iflush(void **request) {
  if (request == nullptr) return ncclInvalidArgument;
  std::lock_guard<std::mutex> lock(mutex_);
  flush_request_.comm = this;
  flush_request_.state = Request::State::kFlush;
  *request = &flush_request_;  // host memory: nothing to flush
  return ncclSuccess;
}

void RecvComm::match(Request *req, const CtrlMsg &header) {
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

ncclResult_t RecvComm::on_message(const CtrlMsg &msg) {
  // Headers come in the sender's order; at most NCCL_NET_MAX_REQUESTS wait.
  if (msg.type != kMsgHeader || msg.id != expected_id_ || msg.value > INT_MAX ||
      unexpected_.size() >= NCCL_NET_MAX_REQUESTS)
    return ncclInternalError;
  ++expected_id_;
  auto it = std::find_if(posted_.begin(), posted_.end(),
                         [&](const Request *r) { return r->tag == msg.tag; });
  if (it == posted_.end()) {
    unexpected_.push_back(msg);
    return ncclSuccess;
  }
  Request *req = *it;
  posted_.erase(it);
  match(req, msg);
  return ncclSuccess;
}

int RecvComm::on_ctrl_failure(ncclResult_t code) {
  int failed = static_cast<int>(posted_.size());
  for (Request *r : posted_) {
    r->completion.fail(code);
    r->state = Request::State::kActive;
  }
  posted_.clear();
  unexpected_.clear();
  return failed;
}

}  // namespace nccom::socket
