// The bootstrap's wire formats (layouts in wire.h), packed byte by byte in
// little-endian order: nothing here copies a whole struct or casts input bytes
// to a struct, so the code is the same on every host and every input byte is
// looked at by exactly one get_*.
//
// Layouts this file chooses:
//
//   Hello (24)           0 u32 magic "NCCB"  4 u16 version  6 u16 zero
//                        8 u64 secret  16 i32 rank  20 i32 nranks
//   MessageHeader (16)   0 u32 type  4 u32 zero  8 u64 payload size
//   RootReply (64 + L)   0 u64 cluster_id  8 i64 epoch  16 successor (28)
//                        44 u32 status  48 u32 error length L  52..64 zero
//                        64 error text (L <= 4096 bytes)
//     cluster_id at 0 and epoch at 8 are those of the original's root reply
//     (INFO_FROM_ROOT; the successor at 16 is inferred); status and the error
//     follow, so a success reply is the original's record plus a zero tail.
//     Status 0: a valid successor, no text.
//     Status != 0: 1..4096 bytes of text and an all-zero successor.
//   LeaderReply (32 + L + 28n)   0 u64 cluster_id  8 i64 epoch  16 u32 status
//                        20 u32 error length L  24 u32 n  28 u32 zero
//                        32 error text  32+L n addresses (n = nranks on
//                        success, 0 on a refusal)
//   LeaderCheckIn (4 + 56n)      0 u32 n  4 n extInfo records
//
// Reserved bytes: the framing records (unique id, hello, header, both
// replies) must have them zero — a non-zero byte there means a desynchronised
// stream or a foreign peer, and their evolution goes through kWireVersion.
// The peer record is the exception: its unpublished bytes (8..16, 56..88,
// 108..112) are ignored, not checked, so a later nccom may fill the rest of
// the fork's extended block without breaking this decoder. The
// encoder always writes them as zero. Error text may not contain NUL bytes
// (it is logged and returned through C strings).
#include "bootstrap/wire.h"

#include <algorithm>
#include <cstdio>
#include <iterator>

namespace nccom::bootstrap {
namespace {

constexpr std::size_t kMaxErrorBytes = 4096;
constexpr std::size_t kRootReplyFixed = 64;
constexpr std::size_t kLeaderReplyFixed = 32;
constexpr std::size_t kCheckInFixed = 4;

// Little-endian, one byte at a time (N = width in bytes).
template <int N>
void put_le(uint8_t* p, uint64_t v) {
  for (int i = 0; i < N; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
template <int N>
uint64_t get_le(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = N - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
void put_u16(uint8_t* p, uint16_t v) { put_le<2>(p, v); }
void put_u32(uint8_t* p, uint32_t v) { put_le<4>(p, v); }
void put_u64(uint8_t* p, uint64_t v) { put_le<8>(p, v); }
void put_i32(uint8_t* p, int32_t v) { put_le<4>(p, static_cast<uint32_t>(v)); }
void put_i64(uint8_t* p, int64_t v) { put_le<8>(p, static_cast<uint64_t>(v)); }
uint16_t get_u16(const uint8_t* p) { return static_cast<uint16_t>(get_le<2>(p)); }
uint32_t get_u32(const uint8_t* p) { return static_cast<uint32_t>(get_le<4>(p)); }
uint64_t get_u64(const uint8_t* p) { return get_le<8>(p); }
int32_t get_i32(const uint8_t* p) { return static_cast<int32_t>(get_u32(p)); }
int64_t get_i64(const uint8_t* p) { return static_cast<int64_t>(get_u64(p)); }

std::string hex(uint64_t v, int digits) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%0*llx", digits, static_cast<unsigned long long>(v));
  return text;
}

Error invalid(const char* record, const std::string& what) {
  return make_error(NRT_INVALID, std::string(record) + ": " + what);
}

std::string byte_count(std::size_t n) { return std::to_string(n) + (n == 1 ? " byte" : " bytes"); }

// Fixed-size records need exactly `expected` bytes (exact), variable-size
// ones at least their fixed part.
Status check_length(const char* record, const uint8_t* bytes, std::size_t length,
                    std::size_t expected, bool exact) {
  if (bytes == nullptr) return invalid(record, "no input (null pointer)");
  const std::string n = std::to_string(length), m = std::to_string(expected);
  if (length < expected && exact)
    return invalid(record, "truncated (" + n + " of " + m + " bytes)");
  if (length < expected)
    return invalid(record, "truncated (" + n + " bytes, the fixed part is " + m + ")");
  if (length > expected && exact)
    return invalid(record, "trailing bytes (" + n + " bytes, expected " + m + ")");
  return {};
}

Status check_zero(const char* record, const uint8_t* bytes, std::size_t from, std::size_t to) {
  for (std::size_t i = from; i < to; ++i) {
    if (bytes[i] != 0) {
      return invalid(record, "non-zero reserved byte at offset " + std::to_string(i) + " (" +
                                 hex(bytes[i], 2) + ")");
    }
  }
  return {};
}

Result<SocketAddress> decode_address(const char* record, const std::string& what,
                                     const uint8_t* bytes) {
  auto address = SocketAddress::decode(bytes, kWireAddressBytes);
  if (!address) return invalid(record, "bad " + what + ": " + address.error().message);
  return address;
}

// Shared by both replies: the status / error-text rules.
Result<std::string> decode_error_text(const char* record, uint32_t status, const uint8_t* text,
                                      std::size_t text_length) {
  if (status == 0 && text_length != 0) {
    return invalid(record, "status 0 (success) with error text (" + byte_count(text_length) + ")");
  }
  if (status != 0 && text_length == 0) {
    return invalid(record, "status " + std::to_string(status) + " (refused) without error text");
  }
  const uint8_t* end = text + text_length;
  if (const uint8_t* nul = std::find(text, end, 0); nul != end) {
    return invalid(record, "NUL byte in the error text (at " + std::to_string(nul - text) + ")");
  }
  return std::string(text, end);
}

std::string clamp_error(const std::string& error) { return error.substr(0, kMaxErrorBytes); }

}  // namespace

// ---- Message types ----------------------------------------------------------

bool valid_msg_type(uint32_t type) {
  return type >= static_cast<uint32_t>(MsgType::kRing) &&
         type <= static_cast<uint32_t>(MsgType::kMaxType);
}

const char* msg_type_name(uint32_t type) {
  // Indexed by MsgType's value (1..kMaxType); 0 stands for every unknown type.
  static constexpr const char* kNames[] = {
      "UNKNOWN", "RING",           "INFO_TO_ROOT",   "INFO_FROM_ROOT",
      "USER",    "TRANSPORT_INIT", "BARRIER",        "RECURSIVE_DOUBLING",
      "BRUCK",   "LEADER_TO_ROOT", "ROOT_TO_LEADER", "REFUSED",
      "GOODBYE", "GAVE_UP"};
  static_assert(std::size(kNames) == static_cast<std::size_t>(MsgType::kMaxType) + 1);
  return valid_msg_type(type) ? kNames[type] : kNames[0];
}

// ---- UniqueId ---------------------------------------------------------------

ncclUniqueId UniqueId::encode() const {
  uint8_t bytes[NCCL_UNIQUE_ID_BYTES] = {};
  root.encode(bytes);
  put_u32(bytes + 28, kUniqueIdMagic);
  put_u64(bytes + 32, secret);
  bytes[40] = static_cast<uint8_t>(protocol);
  ncclUniqueId id{};
  for (std::size_t i = 0; i < NCCL_UNIQUE_ID_BYTES; ++i)
    id.internal[i] = static_cast<char>(bytes[i]);
  return id;
}

Result<UniqueId> UniqueId::decode(const uint8_t* bytes, std::size_t length) {
  constexpr const char* kRecord = "unique id";
  if (auto s = check_length(kRecord, bytes, length, NCCL_UNIQUE_ID_BYTES, true); !s)
    return s.take_error();
  if (const uint32_t magic = get_u32(bytes + 28); magic != kUniqueIdMagic) {
    return invalid(kRecord, "wrong magic " + hex(magic, 8) + " (expected " +
                                hex(kUniqueIdMagic, 8) +
                                " \"NCID\"): not an nccom id (was it produced by neuronGetUniqueId"
                                " or a host:port root?)");
  }
  auto root = decode_address(kRecord, "root address", bytes);
  if (!root) return root.take_error();
  UniqueId id;
  id.root = *root;
  id.secret = get_u64(bytes + 32);
  if (id.secret == 0)
    return invalid(kRecord, "zero secret (every id carries its root's random secret)");
  const uint8_t protocol = bytes[40];
  if (protocol > static_cast<uint8_t>(Protocol::kHierarchical)) {
    return invalid(
        kRecord, "unknown protocol (" + std::to_string(protocol) + "; 0 = flat, 1 = hierarchical)");
  }
  id.protocol = static_cast<Protocol>(protocol);
  if (auto s = check_zero(kRecord, bytes, 41, NCCL_UNIQUE_ID_BYTES); !s) return s.take_error();
  return id;
}

// ---- Hello ------------------------------------------------------------------

std::array<uint8_t, kHelloBytes> Hello::encode() const {
  std::array<uint8_t, kHelloBytes> out{};
  put_u32(&out[0], kHelloMagic);
  put_u16(&out[4], kWireVersion);
  put_u64(&out[8], secret);
  put_i32(&out[16], rank);
  put_i32(&out[20], nranks);
  return out;
}

Result<Hello> Hello::decode(const uint8_t* bytes, std::size_t length) {
  constexpr const char* kRecord = "hello";
  if (auto s = check_length(kRecord, bytes, length, kHelloBytes, true); !s) return s.take_error();
  if (const uint32_t magic = get_u32(bytes); magic != kHelloMagic) {
    return invalid(kRecord, "wrong magic " + hex(magic, 8) + " (expected " + hex(kHelloMagic, 8) +
                                " \"NCCB\"): not an nccom bootstrap connection");
  }
  if (const uint16_t version = get_u16(bytes + 4); version != kWireVersion) {
    return invalid(kRecord, "wire version " + std::to_string(version) + " (this build speaks " +
                                std::to_string(kWireVersion) + "): a different nccom build");
  }
  if (auto s = check_zero(kRecord, bytes, 6, 8); !s) return s.take_error();
  Hello hello;
  hello.secret = get_u64(bytes + 8);
  hello.rank = get_i32(bytes + 16);
  hello.nranks = get_i32(bytes + 20);
  return hello;
}

// ---- MessageHeader -------------------------------------------------------------

std::array<uint8_t, kHeaderBytes> MessageHeader::encode() const {
  std::array<uint8_t, kHeaderBytes> out{};
  put_u32(&out[0], type);
  put_u64(&out[8], size);
  return out;
}

Result<MessageHeader> MessageHeader::decode(const uint8_t* bytes, std::size_t length) {
  constexpr const char* kRecord = "message header";
  if (auto s = check_length(kRecord, bytes, length, kHeaderBytes, true); !s) return s.take_error();
  MessageHeader header;
  header.type = get_u32(bytes);
  if (!valid_msg_type(header.type)) {
    return invalid(kRecord, "unknown message type (" + std::to_string(header.type) + ")");
  }
  if (auto s = check_zero(kRecord, bytes, 4, 8); !s) return s.take_error();
  header.size = get_u64(bytes + 8);
  if (header.size > kMaxMessageBytes) {
    return invalid(kRecord, "size " + std::to_string(header.size) + " exceeds the 4 GiB limit");
  }
  return header;
}

// ---- ExtInfo ------------------------------------------------------------------

std::array<uint8_t, kExtInfoBytes> ExtInfo::encode() const {
  std::array<uint8_t, kExtInfoBytes> out{};
  put_u32(&out[0], kExtInfoSanity);
  put_i32(&out[4], rank);
  put_i32(&out[8], nranks);
  listen_address.encode(&out[12]);
  std::copy(build_tag.begin(), build_tag.end(), out.begin() + 40);
  return out;
}

Result<ExtInfo> ExtInfo::decode(const uint8_t* bytes, std::size_t length) {
  constexpr const char* kRecord = "extInfo";
  if (auto s = check_length(kRecord, bytes, length, kExtInfoBytes, true); !s) return s.take_error();
  if (const uint32_t sanity = get_u32(bytes); sanity != kExtInfoSanity) {
    return invalid(kRecord, "bad sanity word " + hex(sanity, 8) + " (expected " +
                                hex(kExtInfoSanity, 8) +
                                "): not an nccom bootstrap peer, or a different protocol");
  }
  ExtInfo info;
  info.rank = get_i32(bytes + 4);
  info.nranks = get_i32(bytes + 8);
  if (info.nranks < 1)
    return invalid(kRecord, "nranks is not positive (" + std::to_string(info.nranks) + ")");
  if (info.rank < 0 || info.rank >= info.nranks) {
    return invalid(kRecord, "rank outside [0, " + std::to_string(info.nranks) + ") (" +
                                std::to_string(info.rank) + ")");
  }
  auto address =
      decode_address(kRecord, "listen address of rank " + std::to_string(info.rank), bytes + 12);
  if (!address) return address.take_error();
  info.listen_address = *address;
  std::copy(bytes + 40, bytes + 56, info.build_tag.begin());
  return info;
}

// ---- RootReply ------------------------------------------------------------------

std::vector<uint8_t> RootReply::encode() const {
  const std::string text = status == 0 ? std::string() : clamp_error(error);
  std::vector<uint8_t> out(kRootReplyFixed + text.size(), 0);
  put_u64(&out[0], cluster_id);
  put_i64(&out[8], epoch);
  if (status == 0) successor.encode(&out[16]);
  put_u32(&out[44], status);
  put_u32(&out[48], static_cast<uint32_t>(text.size()));
  std::copy(text.begin(), text.end(), out.begin() + kRootReplyFixed);
  return out;
}

Result<RootReply> RootReply::decode(const uint8_t* bytes, std::size_t length) {
  constexpr const char* kRecord = "root reply";
  if (auto s = check_length(kRecord, bytes, length, kRootReplyFixed, false); !s)
    return s.take_error();
  const uint32_t text_length = get_u32(bytes + 48);
  if (text_length > kMaxErrorBytes) {
    return invalid(kRecord, "error text length exceeds 4096 (" + std::to_string(text_length) + ")");
  }
  if (length != kRootReplyFixed + text_length) {
    return invalid(kRecord, "length does not match 64 + error text length " +
                                std::to_string(text_length) + " (" + byte_count(length) + ")");
  }
  if (auto s = check_zero(kRecord, bytes, 52, kRootReplyFixed); !s) return s.take_error();
  RootReply reply;
  reply.cluster_id = get_u64(bytes);
  reply.epoch = get_i64(bytes + 8);
  reply.status = get_u32(bytes + 44);
  auto text = decode_error_text(kRecord, reply.status, bytes + kRootReplyFixed, text_length);
  if (!text) return text.take_error();
  reply.error = std::move(*text);
  if (reply.status == 0) {
    auto successor = decode_address(kRecord, "successor address", bytes + 16);
    if (!successor) return successor.take_error();
    reply.successor = *successor;
  } else if (std::any_of(bytes + 16, bytes + 44, [](uint8_t b) { return b != 0; })) {
    return invalid(kRecord, "a refusal (status " + std::to_string(reply.status) +
                                ") carries a successor address");
  }
  return reply;
}

// ---- PeerRecord -----------------------------------------------------------------

std::array<uint8_t, kPeerRecordBytes> PeerRecord::encode() const {
  std::array<uint8_t, kPeerRecordBytes> out{};
  put_i32(&out[0], rank);
  put_i32(&out[4], device);
  put_u64(&out[16], host_hash);
  put_u64(&out[24], pid_hash);
  put_u64(&out[32], shm_dev);
  put_i64(&out[40], bus_id);
  put_i32(&out[48], pod_node_id);
  put_i32(&out[52], virtual_server_id);
  put_u64(&out[88], comm);
  put_i32(&out[96], comp_cap);
  put_i32(&out[100], host_device_id);
  put_i32(&out[104], mla_idx);
  return out;
}

Result<PeerRecord> PeerRecord::decode(const uint8_t* bytes, std::size_t length, int nranks) {
  constexpr const char* kRecord = "peer record";
  if (auto s = check_length(kRecord, bytes, length, kPeerRecordBytes, true); !s)
    return s.take_error();
  PeerRecord record;
  record.rank = get_i32(bytes);
  if (record.rank < 0 || record.rank >= nranks) {
    return invalid(kRecord, "rank outside [0, " + std::to_string(nranks) + ") (" +
                                std::to_string(record.rank) + ")");
  }
  record.device = get_i32(bytes + 4);
  record.host_hash = get_u64(bytes + 16);
  record.pid_hash = get_u64(bytes + 24);
  record.shm_dev = get_u64(bytes + 32);
  record.bus_id = get_i64(bytes + 40);
  record.pod_node_id = get_i32(bytes + 48);
  record.virtual_server_id = get_i32(bytes + 52);
  record.comm = get_u64(bytes + 88);
  record.comp_cap = get_i32(bytes + 96);
  record.host_device_id = get_i32(bytes + 100);
  record.mla_idx = get_i32(bytes + 104);
  return record;
}

// ---- LeaderCheckIn ---------------------------------------------------------------

std::vector<uint8_t> LeaderCheckIn::encode() const {
  std::vector<uint8_t> out(kCheckInFixed + members.size() * kExtInfoBytes, 0);
  put_u32(&out[0], static_cast<uint32_t>(members.size()));
  for (std::size_t i = 0; i < members.size(); ++i) {
    const auto record = members[i].encode();
    std::copy(record.begin(), record.end(), out.begin() + kCheckInFixed + i * kExtInfoBytes);
  }
  return out;
}

Result<LeaderCheckIn> LeaderCheckIn::decode(const uint8_t* bytes, std::size_t length,
                                            int max_members) {
  constexpr const char* kRecord = "leader check-in";
  if (auto s = check_length(kRecord, bytes, length, kCheckInFixed, false); !s)
    return s.take_error();
  const uint32_t count = get_u32(bytes);
  if (count == 0) return invalid(kRecord, "no members (count 0)");
  if (max_members < 1 || count > static_cast<uint32_t>(max_members)) {
    return invalid(kRecord, "count exceeds the limit of " + std::to_string(max_members) + " (" +
                                std::to_string(count) + ")");
  }
  const uint64_t expected = kCheckInFixed + uint64_t{count} * kExtInfoBytes;
  if (length != expected) {
    return invalid(kRecord, "length does not match 4 + " + std::to_string(count) + " x 56 (" +
                                byte_count(length) + ")");
  }
  LeaderCheckIn checkin;
  checkin.members.reserve(count);
  std::vector<int32_t> ranks;
  ranks.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    auto info = ExtInfo::decode(bytes + kCheckInFixed + i * kExtInfoBytes, kExtInfoBytes);
    if (!info) return invalid(kRecord, "member " + std::to_string(i) + ": " + info.error().message);
    if (i > 0 && info->nranks != checkin.members[0].nranks) {
      return invalid(kRecord, "member " + std::to_string(i) + " disagrees on nranks (" +
                                  std::to_string(info->nranks) + ", member 0 has " +
                                  std::to_string(checkin.members[0].nranks) + ")");
    }
    ranks.push_back(info->rank);
    checkin.members.push_back(*info);
  }
  std::sort(ranks.begin(), ranks.end());
  if (auto dup = std::adjacent_find(ranks.begin(), ranks.end()); dup != ranks.end()) {
    return invalid(kRecord, "rank checked in twice (" + std::to_string(*dup) + ")");
  }
  return checkin;
}

// ---- LeaderReply -------------------------------------------------------------------

std::vector<uint8_t> LeaderReply::encode() const {
  const std::string text = status == 0 ? std::string() : clamp_error(error);
  const std::size_t count = status == 0 ? addresses.size() : 0;
  std::vector<uint8_t> out(kLeaderReplyFixed + text.size() + count * kWireAddressBytes, 0);
  put_u64(&out[0], cluster_id);
  put_i64(&out[8], epoch);
  put_u32(&out[16], status);
  put_u32(&out[20], static_cast<uint32_t>(text.size()));
  put_u32(&out[24], static_cast<uint32_t>(count));
  std::copy(text.begin(), text.end(), out.begin() + kLeaderReplyFixed);
  uint8_t* table = out.data() + kLeaderReplyFixed + text.size();
  for (std::size_t r = 0; r < count; ++r) addresses[r].encode(table + r * kWireAddressBytes);
  return out;
}

Result<LeaderReply> LeaderReply::decode(const uint8_t* bytes, std::size_t length, int nranks) {
  constexpr const char* kRecord = "leader reply";
  if (auto s = check_length(kRecord, bytes, length, kLeaderReplyFixed, false); !s)
    return s.take_error();
  const uint32_t status = get_u32(bytes + 16);
  const uint32_t text_length = get_u32(bytes + 20);
  const uint32_t count = get_u32(bytes + 24);
  if (text_length > kMaxErrorBytes) {
    return invalid(kRecord, "error text length exceeds 4096 (" + std::to_string(text_length) + ")");
  }
  const uint32_t expected_count = status == 0 ? static_cast<uint32_t>(std::max(nranks, 0)) : 0;
  if (count != expected_count) {
    return invalid(kRecord, "address table has the wrong number of entries (" +
                                std::to_string(count) + ", expected " +
                                std::to_string(expected_count) + ")");
  }
  const uint64_t expected =
      kLeaderReplyFixed + uint64_t{text_length} + uint64_t{count} * kWireAddressBytes;
  if (length != expected) {
    return invalid(kRecord, "length does not match 32 + " + std::to_string(text_length) + " + " +
                                std::to_string(count) + " x 28 (" + byte_count(length) + ")");
  }
  if (auto s = check_zero(kRecord, bytes, 28, kLeaderReplyFixed); !s) return s.take_error();
  if (status == 0 && nranks < 1) {
    return invalid(kRecord, "communicator size is not positive (" + std::to_string(nranks) + ")");
  }
  LeaderReply reply;
  reply.cluster_id = get_u64(bytes);
  reply.epoch = get_i64(bytes + 8);
  reply.status = status;
  auto text = decode_error_text(kRecord, status, bytes + kLeaderReplyFixed, text_length);
  if (!text) return text.take_error();
  reply.error = std::move(*text);
  const uint8_t* table = bytes + kLeaderReplyFixed + text_length;
  reply.addresses.reserve(count);
  for (uint32_t r = 0; r < count; ++r) {
    auto address = decode_address(kRecord, "address of rank " + std::to_string(r),
                                  table + r * kWireAddressBytes);
    if (!address) return address.take_error();
    reply.addresses.push_back(*address);
  }
  return reply;
}

}  // namespace nccom::bootstrap
