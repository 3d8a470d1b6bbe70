// Fuzz target: PeerRecord::decode(record, nranks); input = int32 nranks, then
// the record (fuzz_support.h). The record's reserved bytes are accepted and
// ignored (wire.cc), so the round trip is checked field-wise: re-encoding
// gives the input with the reserved bytes zeroed, and decodes to the same.
#include "bootstrap/wire.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nccom::bootstrap;
  using nccom::fuzz::require;
  const auto in = nccom::fuzz::split_param(data, size);
  if (!in.present) return 0;
  auto record = PeerRecord::decode(in.record, in.size, in.param);
  if (!record.ok()) return 0;
  require(record->rank >= 0 && record->rank < in.param, "peer_record",
          "accepted a rank outside [0, nranks)");
  const auto again = record->encode();
  // The bytes that carry fields; everything else must come back zero.
  auto is_field = [](std::size_t i) {
    return i < 8 || (i >= 16 && i < 56) || (i >= 88 && i < 108);
  };
  for (std::size_t i = 0; i < kPeerRecordBytes; ++i) {
    const bool field = is_field(i);
    require(again[i] == (field ? in.record[i] : 0), "peer_record",
            "encode(decode(x)) differs in a field byte");
  }
  auto twice = PeerRecord::decode(again.data(), again.size(), in.param);
  require(twice.ok() && twice->encode() == again, "peer_record", "decode(encode(r)) != r");
  return 0;
}
