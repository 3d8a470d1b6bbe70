// Encoding and validation of the listen handle and the connect message.
// Buffers from the host may be unaligned: every access goes through memcpy.
#include "wire.h"

#include <cstring>

namespace nccom::ofi {
namespace {

constexpr uint32_t kHandleMagic = 0x4f46494eu;   // "NIFO" on little-endian hosts
constexpr uint32_t kMessageMagic = 0x4e43434fu;  // "OCCN"
constexpr uint32_t kHelloMagic = 0x4556494cu;    // "LIVE"
// 2: the handle carries a LivenessAddress trailer, the connect message a nonce.
constexpr uint8_t kWireVersion = 2;

uint32_t fnv1a(const void* data, size_t len, uint32_t hash = 2166136261u) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < len; ++i) {
    hash ^= bytes[i];
    hash *= 16777619u;
  }
  return hash;
}

// Checksum of a handle: header with checksum and cookie zeroed, the address,
// then the liveness trailer.
uint32_t handle_checksum(ListenHandle copy, const LivenessAddress& liveness) {
  copy.checksum = 0;
  copy.connect_cookie = 0;
  return fnv1a(&liveness, sizeof liveness,
               fnv1a(copy.addr, copy.addr_len, fnv1a(&copy, kHandleHeaderSize)));
}

uint32_t message_checksum(ConnectMessage copy) {
  copy.checksum = 0;
  return fnv1a(copy.addr, copy.addr_len, fnv1a(&copy, offsetof(ConnectMessage, addr)));
}

}  // namespace

bool write_handle(void* out, size_t capacity, uint32_t listen_id, const std::vector<uint8_t>& addr,
                  const LivenessAddress& liveness) {
  const size_t size = kHandleHeaderSize + addr.size() + sizeof(LivenessAddress);
  if (addr.empty() || addr.size() > kMaxAddrLen || size > capacity) return false;
  ListenHandle handle{};
  handle.magic = kHandleMagic;
  handle.version = kWireVersion;
  handle.addr_len = static_cast<uint8_t>(addr.size());
  handle.listen_id = listen_id;
  std::memcpy(handle.addr, addr.data(), addr.size());
  handle.checksum = handle_checksum(handle, liveness);
  std::memset(out, 0, capacity);
  std::memcpy(out, &handle, kHandleHeaderSize + addr.size());
  std::memcpy(static_cast<uint8_t*>(out) + kHandleHeaderSize + addr.size(), &liveness,
              sizeof liveness);
  return true;
}

bool read_handle(const void* in, size_t capacity, PeerAddress* out) {
  if (in == nullptr || capacity < kHandleHeaderSize) return false;
  ListenHandle handle{};
  std::memcpy(&handle, in, kHandleHeaderSize);
  if (handle.magic != kHandleMagic || handle.version != kWireVersion) return false;
  if (handle.addr_len == 0 || handle.addr_len > kMaxAddrLen ||
      kHandleHeaderSize + handle.addr_len + sizeof(LivenessAddress) > capacity) {
    return false;
  }
  const auto* bytes = static_cast<const uint8_t*>(in);
  std::memcpy(handle.addr, bytes + kHandleHeaderSize, handle.addr_len);
  LivenessAddress liveness;
  std::memcpy(&liveness, bytes + kHandleHeaderSize + handle.addr_len, sizeof liveness);
  if (handle.checksum != handle_checksum(handle, liveness)) return false;
  if (liveness.kind > static_cast<uint8_t>(LivenessKind::kIpv4)) return false;
  out->listen_id = handle.listen_id;
  out->addr.assign(handle.addr, handle.addr + handle.addr_len);
  out->liveness = liveness;
  return true;
}

uint64_t read_cookie(const void* handle) {
  uint64_t cookie = 0;
  std::memcpy(&cookie, static_cast<const uint8_t*>(handle) + offsetof(ListenHandle, connect_cookie),
              sizeof cookie);
  return cookie;
}

void write_cookie(void* handle, uint64_t cookie) {
  std::memcpy(static_cast<uint8_t*>(handle) + offsetof(ListenHandle, connect_cookie), &cookie,
              sizeof cookie);
}

ConnectMessage make_connect_message(uint32_t listen_id, const std::vector<uint8_t>& addr,
                                    uint64_t liveness_nonce) {
  ConnectMessage message{};
  message.liveness_nonce = liveness_nonce;
  message.magic = kMessageMagic;
  message.version = kWireVersion;
  message.addr_len = static_cast<uint8_t>(addr.size() <= kMaxAddrLen ? addr.size() : 0);
  message.listen_id = listen_id;
  std::memcpy(message.addr, addr.data(), message.addr_len);
  message.checksum = message_checksum(message);
  return message;
}

bool read_connect_message(const ConnectMessage& message, size_t len, PeerAddress* out) {
  if (len != sizeof(ConnectMessage)) return false;
  if (message.magic != kMessageMagic || message.version != kWireVersion) return false;
  if (message.addr_len == 0 || message.addr_len > kMaxAddrLen) return false;
  if (message.checksum != message_checksum(message)) return false;
  out->listen_id = message.listen_id;
  out->addr.assign(message.addr, message.addr + message.addr_len);
  out->liveness_nonce = message.liveness_nonce;
  return true;
}

LivenessHello make_hello(uint32_t listen_id, uint64_t nonce) {
  return LivenessHello{kHelloMagic, listen_id, nonce};
}

bool hello_matches(const uint8_t (&bytes)[kHelloSize], uint32_t listen_id, uint64_t nonce) {
  LivenessHello hello;
  std::memcpy(&hello, bytes, sizeof hello);
  return hello.magic == kHelloMagic && hello.listen_id == listen_id && hello.nonce == nonce;
}

}  // namespace nccom::ofi
