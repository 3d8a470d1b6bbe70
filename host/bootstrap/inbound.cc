#include "bootstrap/inbound.h"

#include "bootstrap/join.h"

#include <algorithm>

namespace nccom::bootstrap {

static_assert(kHelloBytes >= kHeaderBytes, "head_ holds a Hello or a header");

InboundConnection::InboundConnection(Socket sock, HelloValidator validator)
    : sock_(std::move(sock)),
      validator_(std::move(validator)),
      from_(sock_.peer_address().to_string()) {}

void InboundConnection::close() {
  closed_ = true;
  sock_.close();
}

Status InboundConnection::complete_stage(std::vector<Message>* out) {
  got_ = 0;
  switch (stage_) {
    case Stage::kHello: {
      auto hello = Hello::decode(head_, kHelloBytes);
      if (!hello) return hello.take_error();
      if (Status ok = validator_(*hello); !ok) {
        refused_hello_ = true;
        hello_ = *hello;
        return ok;
      }
      hello_ = *hello;
      identified_ = true;
      stage_ = Stage::kHeader;
      return {};
    }
    case Stage::kHeader: {
      auto header = MessageHeader::decode(head_, kHeaderBytes);
      if (!header) return header.take_error();
      current_.type = header->type;
      current_.payload.assign(header->size, 0);
      if (header->size == 0) {
        out->push_back(std::move(current_));
        current_ = {};
      } else {
        stage_ = Stage::kPayload;
      }
      return {};
    }
    case Stage::kPayload:
      out->push_back(std::move(current_));
      current_ = {};
      stage_ = Stage::kHeader;
      return {};
  }
  return {};
}

void InboundConnection::tell_refused(const std::string& why) {
  const std::size_t n = std::min(why.size(), kMaxRefusalBytes);
  // Best effort: a peer that does not read must not hold the owner up.
  (void)send_message(sock_, MsgType::kRefused, std::vector<uint8_t>(why.begin(), why.begin() + n),
                     Clock::now() + std::chrono::milliseconds(100));
  // Closing with unread bytes would reset the connection and could discard
  // the refusal on the peer's side: take what the peer already sent.
  uint8_t scratch[4096];
  for (std::size_t drained = 0; drained < 64 * sizeof scratch;) {
    auto n = sock_.recv_some(scratch, sizeof scratch);
    if (!n || *n == 0) break;
    drained += *n;
  }
}

Status InboundConnection::read_available(std::vector<Message>* out) {
  while (!closed_) {
    const std::size_t total = stage_ == Stage::kHello    ? kHelloBytes
                              : stage_ == Stage::kHeader ? kHeaderBytes
                                                         : current_.payload.size();
    uint8_t* base = stage_ == Stage::kPayload ? current_.payload.data() : head_;
    auto n = sock_.recv_some(base + got_, total - got_);
    if (!n) {
      const bool between_messages = stage_ == Stage::kHeader && got_ == 0;
      close();
      if (between_messages) return {};
      return make_error(NRT_FAILURE, identified_ ? "connection broke in the middle of a message: " +
                                                       n.error().message
                                                 : "closed before identifying itself");
    }
    if (*n == 0) return {};  // would block
    got_ += *n;
    if (got_ == total) {
      Status ok = complete_stage(out);
      if (!ok) {
        if (refused_hello_ && tell_refusals_) tell_refused(ok.error().message);
        close();
        return ok;
      }
    }
  }
  return {};
}

}  // namespace nccom::bootstrap
