// The receiving half of the eager path (see socket_comm.h): granting it,
// reading eager payloads off the control stream into a matched receive or a
// bounded holding buffer, and handing credits back as messages are consumed.
#include "socket_comm.h"
#include "socket_log.h"

#include <algorithm>
#include <cstring>

namespace nccom::socket {

void RecvComm::grant(EagerOffer offer) {
  if (offer.max_bytes == 0 || offer.credits <= 0) {
    SOCK_TRACE("%s offered no eager path: every message goes rendezvous", peer_.c_str());
    return;
  }
  eager_max_ = std::min(offer.max_bytes, kEagerMaxBytes);
  eager_credits_ = std::min(offer.credits, kEagerCredits);
  // Credits go back in batches (fewer control records, fewer wake-ups on the
  // sender); the sender keeps at least 3/4 of them in steady state.
  credit_batch_ = std::max(1, eager_credits_ / 4);
  queue_ctrl(CtrlMsg{kMsgEagerGrant, 0, static_cast<uint64_t>(eager_max_),
                     static_cast<uint64_t>(eager_credits_)});
}

ncclResult_t RecvComm::on_eager(const CtrlMsg& msg) {
  // Only if granted, within the agreed size, and with a credit the sender
  // actually had: this bounds what the plugin may have to hold.
  if (eager_credits_ == 0 || msg.value > eager_max_ || eager_unreturned_ >= eager_credits_) {
    SOCK_WARN(
        "%s sent eager message %lu (%lu bytes) outside what was granted (up to %zu bytes, %d of %d "
        "credits in use)",
        peer_.c_str(), static_cast<unsigned long>(msg.id), static_cast<unsigned long>(msg.value),
        eager_max_, eager_unreturned_, eager_credits_);
    return ncclInternalError;
  }
  ++expected_id_;
  ++eager_unreturned_;
  size_t size = static_cast<size_t>(msg.value);
  eager_in_.header = msg;
  eager_in_.target = nullptr;
  eager_in_.refused = false;
  eager_in_.held.clear();
  auto it = posted_with_tag(msg.tag);
  if (it != posted_.end()) {
    Request* req = *it;
    posted_.erase(it);
    req->id = msg.id;
    req->state = Request::State::kActive;
    if (size > static_cast<size_t>(req->size)) {
      // The receive fails now; the payload is still read (and dropped) to keep
      // the stream in step.
      refuse_eager(msg, req->size);
      req->completion.fail(ncclInternalError);
      eager_in_.refused = true;
      eager_in_.held.resize(size);
      begin_payload(eager_in_.held.data(), size);
      return ncclSuccess;
    }
    req->bytes = static_cast<int>(size);
    req->completion.chunks_left.store(1, std::memory_order_relaxed);
    eager_in_.target = req;
    begin_payload(req->data, size);
    return ncclSuccess;
  }
  eager_in_.held.resize(size);
  begin_payload(eager_in_.held.data(), size);
  return ncclSuccess;
}

void RecvComm::on_payload() {
  if (eager_in_.target != nullptr) {
    // Release: pairs with test()'s acquire (the payload is in the buffer).
    eager_in_.target->completion.chunks_left.store(0, std::memory_order_release);
    eager_in_.target = nullptr;
    consumed_eager();
    return;
  }
  if (eager_in_.refused) {
    eager_in_.refused = false;
    eager_in_.held.clear();
    consumed_eager();
    return;
  }
  Arrived arrived{eager_in_.header, true, std::move(eager_in_.held)};
  eager_in_.held = {};
  // A receive posted while the payload was arriving is the oldest one with
  // this tag (irecv tried the older held messages first).
  auto it = posted_with_tag(arrived.header.tag);
  if (it != posted_.end()) {
    Request* req = *it;
    posted_.erase(it);
    match_held(req, arrived);
    return;
  }
  unexpected_.push_back(std::move(arrived));
}

void RecvComm::match_held(Request* req, Arrived& held) {
  req->id = held.header.id;
  req->state = Request::State::kActive;
  size_t size = held.payload.size();
  if (size > static_cast<size_t>(req->size)) {
    refuse_eager(held.header, req->size);
    req->completion.fail(ncclInternalError);
  } else {
    if (size > 0) memcpy(req->data, held.payload.data(), size);
    req->bytes = static_cast<int>(size);
  }
  held.payload = {};
  consumed_eager();
}

void RecvComm::refuse_eager(const CtrlMsg& header, int capacity) {
  SOCK_WARN("eager message %lu from %s (tag %d) has %lu bytes; the receive buffer only %d",
            static_cast<unsigned long>(header.id), peer_.c_str(), header.tag,
            static_cast<unsigned long>(header.value), capacity);
  queue_ctrl(CtrlMsg{kMsgEagerDropped, header.tag, header.id, header.value});
}

void RecvComm::consumed_eager() {
  if (++credits_to_return_ < credit_batch_) return;
  queue_ctrl(CtrlMsg{kMsgCredit, 0, 0, static_cast<uint64_t>(credits_to_return_)});
  eager_unreturned_ -= credits_to_return_;
  credits_to_return_ = 0;
}

}  // namespace nccom::socket
