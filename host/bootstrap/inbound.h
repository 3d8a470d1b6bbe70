// InboundConnection — the receiving end of one bootstrap connection, read
// without blocking: first the Hello (checked by the owner's validator: the
// secret, the claimed rank), then framed messages. Used by the root and by
// every rank's PeerMesh, so both apply the same rules to untrusted bytes.
#pragma once

#include "bootstrap/socket.h"
#include "bootstrap/wire.h"

#include <functional>
#include <string>
#include <vector>

namespace nccom::bootstrap {

class InboundConnection {
 public:
  struct Message {
    uint32_t type = 0;
    std::vector<uint8_t> payload;
  };
  // Returns an error (why the peer is refused) or success for a Hello.
  using HelloValidator = std::function<Status(const Hello&)>;

  InboundConnection(Socket sock, HelloValidator validator);

  // Reads everything available now; complete messages are appended to `out`.
  // An error means the connection is unusable (refused Hello, malformed
  // header, broken mid-message); the message says why. An orderly close
  // between messages is not an error: closed() becomes true.
  Status read_available(std::vector<Message>* out);

  bool identified() const { return identified_; }
  // The peer sent a well-formed Hello that the validator refused (it speaks
  // the protocol, so it can be told why).
  bool refused_hello() const { return refused_hello_; }
  // A refused Hello is answered with a REFUSED message carrying the reason
  // (best effort, bounded to 100 ms) before the connection is closed.
  void tell_refusals() { tell_refusals_ = true; }
  const Hello& hello() const { return hello_; }
  bool closed() const { return closed_; }
  int fd() const { return sock_.fd(); }
  const std::string& from() const { return from_; }
  Socket& socket() { return sock_; }
  void close();

 private:
  enum class Stage { kHello, kHeader, kPayload };
  Status complete_stage(std::vector<Message>* out);
  void tell_refused(const std::string& why);

  Socket sock_;
  HelloValidator validator_;
  std::string from_;
  Stage stage_ = Stage::kHello;
  uint8_t head_[kHelloBytes] = {};
  std::size_t got_ = 0;
  Hello hello_;
  bool identified_ = false;
  bool refused_hello_ = false;
  bool tell_refusals_ = false;
  bool closed_ = false;
  Message current_;
};

}  // namespace nccom::bootstrap
