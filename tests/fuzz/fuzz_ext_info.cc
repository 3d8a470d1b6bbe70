// Fuzz target: ExtInfo::decode, the rank -> root check-in the root reads from
// any process that connects to it.
#include "bootstrap/wire.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nccom::bootstrap;
  auto info = ExtInfo::decode(data, size);
  if (!info.ok()) return 0;
  nccom::fuzz::require(info->rank >= 0 && info->rank < info->nranks, "ext_info",
                       "accepted a rank outside [0, nranks)");
  nccom::fuzz::require(info->listen_address.valid(), "ext_info", "accepted an invalid address");
  const auto again = info->encode();
  nccom::fuzz::require(nccom::fuzz::same_bytes(again.data(), again.size(), data, size), "ext_info",
                       "encode(decode(x)) != x");
  return 0;
}
