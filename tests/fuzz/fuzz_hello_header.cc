// Fuzz target: Hello::decode and MessageHeader::decode, the first bytes every
// bootstrap connection and every message read from a socket. Both decoders
// see every input; a decoded record re-encodes to the input bytes.
#include "bootstrap/wire.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nccom::bootstrap;
  using nccom::fuzz::require;
  using nccom::fuzz::same_bytes;
  if (auto hello = Hello::decode(data, size); hello.ok()) {
    const auto again = hello->encode();
    require(same_bytes(again.data(), again.size(), data, size), "hello_header",
            "hello: encode(decode(x)) != x");
  }
  if (auto header = MessageHeader::decode(data, size); header.ok()) {
    require(valid_msg_type(header->type), "hello_header", "accepted an unknown message type");
    require(header->size <= kMaxMessageBytes, "hello_header", "accepted an oversize message");
    require(msg_type_name(header->type)[0] != '\0', "hello_header", "a type without a name");
    const auto again = header->encode();
    require(same_bytes(again.data(), again.size(), data, size), "hello_header",
            "header: encode(decode(x)) != x");
  }
  return 0;
}
