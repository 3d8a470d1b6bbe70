#include "bootstrap/inbound.h"

namespace nccom::bootstrap {

static_assert(kHelloBytes >= kHeaderBytes, "head_ holds a Hello or a header");

InboundConnection::InboundConnection(Socket sock, HelloValidator validator)
    : sock_(std::move(sock)), validator_(std::move(validator)),
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
      if (Status ok = validator_(*hello); !ok) return ok;
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
      return make_error(NRT_FAILURE, identified_
                                         ? "connection broke in the middle of a message: " +
                                               n.error().message
                                         : "closed before identifying itself");
    }
    if (*n == 0) return {};  // would block
    got_ += *n;
    if (got_ == total) {
      Status ok = complete_stage(out);
      if (!ok) {
        close();
        return ok;
      }
    }
  }
  return {};
}

}  // namespace nccom::bootstrap
