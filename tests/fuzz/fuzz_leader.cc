// Fuzz target: LeaderCheckIn::decode(bytes, max_members) and
// LeaderReply::decode(bytes, nranks), the hierarchical bootstrap's variable
// length records. Input: a selector byte, int32 parameter, record
// (fuzz_support.h). Both records are canonical: re-encoding gives the input.
#include "bootstrap/wire.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nccom::bootstrap;
  using nccom::fuzz::require;
  using nccom::fuzz::same_bytes;
  if (size == 0) return 0;
  const bool reply_record = nccom::fuzz::leader_is_reply(data, size);
  const auto in = nccom::fuzz::split_param(data + 1, size - 1);
  if (!in.present) return 0;
  if (!reply_record) {
    auto checkin = LeaderCheckIn::decode(in.record, in.size, in.param);
    if (!checkin.ok()) return 0;
    require(
        !checkin->members.empty() && checkin->members.size() <= static_cast<std::size_t>(in.param),
        "leader", "check-in member count outside [1, max_members]");
    const auto again = checkin->encode();
    require(same_bytes(again.data(), again.size(), in.record, in.size), "leader",
            "check-in: encode(decode(x)) != x");
  } else {
    auto reply = LeaderReply::decode(in.record, in.size, in.param);
    if (!reply.ok()) return 0;
    require(reply->status != 0 || reply->addresses.size() == static_cast<std::size_t>(in.param),
            "leader", "a success reply whose table is not nranks long");
    const auto again = reply->encode();
    require(same_bytes(again.data(), again.size(), in.record, in.size), "leader",
            "reply: encode(decode(x)) != x");
  }
  return 0;
}
