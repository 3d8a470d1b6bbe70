#include "health/wire.h"

#include <algorithm>
#include <cstring>

namespace nccom::health {
namespace {

constexpr uint32_t kCardMagic = 0x4348434e;   // "NCHC" little-endian
constexpr uint32_t kFrameMagic = 0x4648434e;  // "NCHF"
constexpr uint16_t kCardVersion = 1;
constexpr std::size_t kHostBytes = 60;

template <typename T>
void put(uint8_t* out, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i) out[i] = static_cast<uint8_t>(value >> (8 * i));
}
template <typename T>
T get(const uint8_t* in) {
  T value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i)
    value |= static_cast<T>(static_cast<T>(in[i]) << (8 * i));
  return value;
}

Error bad(const std::string& what) { return make_error(NRT_INVALID, "health: " + what); }

}  // namespace

std::array<uint8_t, kCardBytes> Card::encode() const {
  std::array<uint8_t, kCardBytes> out{};
  put<uint32_t>(&out[0], kCardMagic);
  put<uint16_t>(&out[4], kCardVersion);
  put<uint16_t>(&out[6], service ? 1 : 0);
  put<uint32_t>(&out[8], pid);
  put<uint32_t>(&out[12], client_inode);
  put<uint64_t>(&out[16], process);
  endpoint.encode(&out[24]);
  std::memcpy(&out[52], host.data(), std::min(host.size(), kHostBytes - 1));
  return out;
}

Result<Card> Card::decode(const uint8_t* bytes, std::size_t length) {
  if (length != kCardBytes) {
    return bad("card of " + std::to_string(length) + " bytes, expected " +
               std::to_string(kCardBytes));
  }
  if (get<uint32_t>(&bytes[0]) != kCardMagic) return bad("card has a wrong magic");
  if (get<uint16_t>(&bytes[4]) != kCardVersion) {
    return bad("card version " + std::to_string(get<uint16_t>(&bytes[4])) + ", expected " +
               std::to_string(kCardVersion));
  }
  Card card;
  const uint16_t flags = get<uint16_t>(&bytes[6]);
  if ((flags & ~1u) != 0) return bad("card has unknown flags");
  card.service = (flags & 1u) != 0;
  card.pid = get<uint32_t>(&bytes[8]);
  card.client_inode = get<uint32_t>(&bytes[12]);
  card.process = get<uint64_t>(&bytes[16]);
  if (card.process == 0) return bad("card has a zero process key");
  if (card.service) {
    auto endpoint = bootstrap::SocketAddress::decode(&bytes[24], bootstrap::kWireAddressBytes);
    if (!endpoint) return bad("card endpoint: " + endpoint.error().message);
    card.endpoint = *endpoint;
  }
  const auto* host = reinterpret_cast<const char*>(&bytes[52]);
  const std::size_t n = strnlen(host, kHostBytes);
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(host[i]);
    card.host.push_back(c > 0x20 && c < 0x7f ? static_cast<char>(c) : '?');
  }
  return card;
}

std::array<uint8_t, kFrameHeaderBytes> encode_header(FrameType type, uint32_t length) {
  std::array<uint8_t, kFrameHeaderBytes> out{};
  put<uint32_t>(&out[0], kFrameMagic);
  out[4] = static_cast<uint8_t>(type);
  put<uint32_t>(&out[8], length);
  return out;
}

Result<FrameHeader> decode_header(const uint8_t* bytes, std::size_t length) {
  if (length < kFrameHeaderBytes) return bad("short frame header");
  if (get<uint32_t>(&bytes[0]) != kFrameMagic) return bad("not a health frame (wrong magic)");
  if (bytes[5] != 0 || bytes[6] != 0 || bytes[7] != 0) return bad("frame header has junk bytes");
  const uint8_t type = bytes[4];
  if (type < static_cast<uint8_t>(FrameType::kHello) ||
      type > static_cast<uint8_t>(FrameType::kLeft)) {
    return bad("unknown frame type " + std::to_string(type));
  }
  FrameHeader h;
  h.type = static_cast<FrameType>(type);
  h.length = get<uint32_t>(&bytes[8]);
  if (h.length > kMaxPayload) {
    return bad("frame of " + std::to_string(h.length) + " bytes is over the " +
               std::to_string(kMaxPayload) + "-byte bound");
  }
  const bool empty = h.type == FrameType::kKeepAlive || h.type == FrameType::kGoodbye ||
                     h.type == FrameType::kQuery || h.type == FrameType::kUnlink;
  if (empty && h.length != 0) return bad("a control frame with a payload");
  if (h.type == FrameType::kHello && h.length != kHelloBytes) return bad("hello of wrong size");
  if (h.type == FrameType::kLeft && h.length != kLeftBytes)
    return bad("a left notice of wrong size");
  return h;
}

std::vector<uint8_t> left_frame(uint64_t process) {
  std::vector<uint8_t> out(kFrameHeaderBytes + kLeftBytes);
  const auto h = encode_header(FrameType::kLeft, kLeftBytes);
  std::copy(h.begin(), h.end(), out.begin());
  put<uint64_t>(&out[kFrameHeaderBytes], process);
  return out;
}

Result<uint64_t> decode_left(const uint8_t* bytes, std::size_t length) {
  if (length != kLeftBytes) return bad("a left notice of wrong size");
  const uint64_t key = get<uint64_t>(bytes);
  if (key == 0) return bad("a left notice with a zero process key");
  return key;
}

std::vector<uint8_t> Hello::frame() const {
  std::vector<uint8_t> out(kFrameHeaderBytes + kHelloBytes);
  const auto h = encode_header(FrameType::kHello, kHelloBytes);
  std::copy(h.begin(), h.end(), out.begin());
  put<uint64_t>(&out[kFrameHeaderBytes], secret);
  put<uint64_t>(&out[kFrameHeaderBytes + 8], process);
  out[kFrameHeaderBytes + 16] = static_cast<uint8_t>(purpose);
  return out;
}

Result<Hello> Hello::decode(const uint8_t* bytes, std::size_t length) {
  if (length != kHelloBytes) return bad("hello of wrong size");
  Hello h;
  h.secret = get<uint64_t>(&bytes[0]);
  h.process = get<uint64_t>(&bytes[8]);
  if (bytes[16] > 1) return bad("hello with unknown purpose " + std::to_string(bytes[16]));
  h.purpose = static_cast<Purpose>(bytes[16]);
  if (h.process == 0) return bad("hello with a zero process key");
  return h;
}

std::vector<uint8_t> frame(FrameType type, const std::string& payload) {
  std::vector<uint8_t> out(kFrameHeaderBytes + payload.size());
  const auto h = encode_header(type, static_cast<uint32_t>(payload.size()));
  std::copy(h.begin(), h.end(), out.begin());
  std::copy(payload.begin(), payload.end(), out.begin() + kFrameHeaderBytes);
  return out;
}

}  // namespace nccom::health
