// Fuzz target: UniqueId::decode (the 128-byte id a rank receives from libnrt).
// A decoded id is canonical: re-encoding it gives back the input bytes.
#include "bootstrap/wire.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nccom::bootstrap;
  auto id = UniqueId::decode(data, size);
  if (!id.ok()) {
    nccom::fuzz::require(!id.error().message.empty(), "unique_id", "an error without a message");
    return 0;
  }
  const ncclUniqueId again = id->encode();
  nccom::fuzz::require(nccom::fuzz::same_bytes(reinterpret_cast<const uint8_t*>(again.internal),
                                               sizeof again.internal, data, size),
                       "unique_id", "encode(decode(x)) != x");
  return 0;
}
