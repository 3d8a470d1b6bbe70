// Fuzz target: RootReply::decode (variable length: 64 + error text).
#include "bootstrap/wire.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nccom::bootstrap;
  using nccom::fuzz::require;
  auto reply = RootReply::decode(data, size);
  if (!reply.ok()) return 0;
  require(reply->error.size() <= 4096, "root_reply", "error text above 4096 bytes");
  require((reply->status == 0) == reply->error.empty(), "root_reply",
          "status and error text disagree");
  require((reply->status == 0) == reply->successor.valid(), "root_reply",
          "status and successor disagree");
  const auto again = reply->encode();
  require(nccom::fuzz::same_bytes(again.data(), again.size(), data, size), "root_reply",
          "encode(decode(x)) != x");
  return 0;
}
