#include "seeds.h"

#include "bootstrap/wire.h"
#include "fuzz_support.h"

#include <stdexcept>

namespace nccom::fuzz {
namespace {

using namespace nccom::bootstrap;

SocketAddress address(const char* text) {
  auto parsed = SocketAddress::parse(text);
  if (!parsed) throw std::runtime_error(parsed.error().message);
  return *parsed;
}
SocketAddress v4() { return address("192.168.7.9:41000"); }
SocketAddress v6() { return address("[fd00::1:2]:50505"); }

template <class Bytes>
std::vector<uint8_t> bytes_of(const Bytes& b) {
  return std::vector<uint8_t>(b.begin(), b.end());
}

std::vector<uint8_t> with_param(int32_t param, std::vector<uint8_t> record, int selector = -1) {
  std::vector<uint8_t> out;
  if (selector >= 0) out.push_back(static_cast<uint8_t>(selector));
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<uint8_t>(static_cast<uint32_t>(param) >> (8 * i)));
  out.insert(out.end(), record.begin(), record.end());
  return out;
}

ExtInfo ext(int rank, int nranks, const SocketAddress& a, bool tag) {
  ExtInfo info{rank, nranks, a, {}};
  if (tag)
    for (std::size_t i = 0; i < 12; ++i)
      info.build_tag[i] = static_cast<uint8_t>("0123456789ab"[i]);
  return info;
}

std::vector<uint8_t> id(const SocketAddress& a, uint64_t secret, Protocol p) {
  const ncclUniqueId raw = UniqueId{a, secret, p}.encode();
  return std::vector<uint8_t>(raw.internal, raw.internal + sizeof raw.internal);
}

std::vector<Seed> unique_id_seeds() {
  auto bad_magic = id(v4(), 7, Protocol::kFlat);
  bad_magic[31] = 'X';
  auto truncated = id(v6(), 7, Protocol::kFlat);
  truncated.pop_back();
  return {{"valid-ipv4-flat", id(v4(), 0x0123456789abcdefull, Protocol::kFlat)},
          {"valid-ipv6-hierarchical", id(v6(), 0xfedcba9876543210ull, Protocol::kHierarchical)},
          {"edge-zero-secret", id(v4(), 0, Protocol::kFlat)},
          {"edge-bad-magic", bad_magic},
          {"edge-truncated", truncated},
          {"edge-empty", {}}};
}

std::vector<Seed> hello_header_seeds() {
  auto v2 = Hello{1, 0, 2}.encode();
  v2[4] = 2;
  return {{"valid-hello", bytes_of(Hello{0x1122334455667788ull, 3, 16}.encode())},
          {"valid-hello-root", bytes_of(Hello{0x99, -1, 4096}.encode())},
          {"valid-header-ring", bytes_of(MessageHeader{1, 28 * 64}.encode())},
          {"valid-header-4gib", bytes_of(MessageHeader{10, kMaxMessageBytes}.encode())},
          {"edge-header-oversize", bytes_of(MessageHeader{4, kMaxMessageBytes + 1}.encode())},
          {"edge-hello-version2", bytes_of(v2)}};
}

std::vector<Seed> ext_info_seeds() {
  auto bad = ext(0, 1, v4(), false).encode();
  bad[0] ^= 0xff;
  return {{"valid-ipv4", bytes_of(ext(0, 2, v4(), false).encode())},
          {"valid-ipv6-tagged", bytes_of(ext(255, 256, v6(), true).encode())},
          {"edge-bad-sanity", bytes_of(bad)},
          {"edge-rank-equals-nranks", bytes_of(ext(4, 4, v4(), false).encode())}};
}

std::vector<Seed> root_reply_seeds() {
  auto mismatch = RootReply{2, 0, 0, SocketAddress(), "abc"}.encode();
  mismatch.pop_back();
  auto huge = RootReply{2, 0, 0, SocketAddress(), "abc"}.encode();
  huge[51] = 0xff;
  return {
      {"valid-ipv4", RootReply{0, 0xc1u, 1700000000, v4(), ""}.encode()},
      {"valid-ipv6", RootReply{0, ~0ull, -1, v6(), ""}.encode()},
      {"valid-refusal", RootReply{5, 1, 2, SocketAddress(), "rank 3 runs another build"}.encode()},
      {"valid-refusal-4096", RootReply{5, 0, 0, SocketAddress(), std::string(4096, 'e')}.encode()},
      {"edge-length-mismatch", mismatch},
      {"edge-huge-text-length", huge}};
}

std::vector<Seed> peer_record_seeds() {
  const PeerRecord typical{3, 1, 0xabcdef,          0x123456, 0x2f, 0x1001e,
                           2, 0, 0x7f0000001000ull, 0,        7,    1};
  const PeerRecord extreme{0x7ffffffe, -1,        ~0ull, ~0ull, ~0ull, INT64_MIN,
                           -1,         INT32_MAX, ~0ull, -1,    -1,    -1};
  auto reserved = typical.encode();
  reserved[60] = 0x5a;
  return {{"valid-typical", with_param(8, bytes_of(typical.encode()))},
          {"valid-extreme", with_param(INT32_MAX, bytes_of(extreme.encode()))},
          {"valid-reserved-bytes", with_param(4, bytes_of(reserved))},
          {"edge-rank-out-of-range", with_param(3, bytes_of(typical.encode()))}};
}

std::vector<Seed> leader_seeds() {
  const LeaderCheckIn checkin{
      {ext(4, 8, v4(), true), ext(6, 8, v6(), true), ext(5, 8, v4(), true)}};
  const LeaderReply reply{0, "", 77, 1700000000, {v4(), v6(), v4(), v6()}};
  const LeaderReply refusal{3, "two leaders for host ip-10-0-0-1", 0, 0, {}};
  auto huge = reply.encode();
  huge[27] = 0xff;  // count 0xff000004
  std::vector<uint8_t> huge_checkin{0xff, 0xff, 0xff, 0xff};
  return {{"valid-checkin", with_param(8, checkin.encode(), 0)},
          {"valid-reply", with_param(4, reply.encode(), 1)},
          {"valid-refusal", with_param(4, refusal.encode(), 1)},
          {"edge-reply-huge-count", with_param(4, huge, 1)},
          {"edge-checkin-huge-count", with_param(INT32_MAX, huge_checkin, 0)}};
}

}  // namespace

const std::vector<std::string>& target_names() {
  static const std::vector<std::string> names{"unique_id",  "hello_header", "ext_info",
                                              "root_reply", "peer_record",  "leader"};
  return names;
}

std::vector<Seed> make_seeds(const std::string& target) {
  if (target == "unique_id") return unique_id_seeds();
  if (target == "hello_header") return hello_header_seeds();
  if (target == "ext_info") return ext_info_seeds();
  if (target == "root_reply") return root_reply_seeds();
  if (target == "peer_record") return peer_record_seeds();
  if (target == "leader") return leader_seeds();
  throw std::invalid_argument("no fuzz target " + target);
}

bool seed_decodes(const std::string& target, const std::vector<uint8_t>& input) {
  const uint8_t* data = input.data();
  const std::size_t size = input.size();
  if (target == "unique_id") return UniqueId::decode(data, size).ok();
  if (target == "hello_header")
    return Hello::decode(data, size).ok() || MessageHeader::decode(data, size).ok();
  if (target == "ext_info") return ExtInfo::decode(data, size).ok();
  if (target == "root_reply") return RootReply::decode(data, size).ok();
  if (target == "peer_record") {
    const auto in = split_param(data, size);
    return in.present && PeerRecord::decode(in.record, in.size, in.param).ok();
  }
  if (target == "leader" && size > 0) {
    const auto in = split_param(data + 1, size - 1);
    if (!in.present) return false;
    return leader_is_reply(data, size) ? LeaderReply::decode(in.record, in.size, in.param).ok()
                                       : LeaderCheckIn::decode(in.record, in.size, in.param).ok();
  }
  return false;
}

}  // namespace nccom::fuzz
