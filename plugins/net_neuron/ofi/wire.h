// The plugin's private wire formats (only this plugin reads its handles and
// connect messages, so they need not match the original's):
//
//  * ListenHandle — what listen writes into the host's handle buffer and the
//    host ships to the connecting peer: the listening endpoint's fi_getname
//    address, the id of the comm that will receive and the liveness address.
//    24 bytes + address + 8, so it fits NCCL_NET_HANDLE_MAXSIZE (128) and,
//    for every address format seen (IPv4 16 B, IPv6 28 B, EFA 32 B, shm
//    strings of 18 B), the v4 limit (64).
//  * ConnectMessage — the one message connect sends to the listener (tagged,
//    control tag space): the sender's address, so the receiver can insert it
//    into its AV for the reply path (iread/iwrite need it), and the nonce of
//    the liveness channel (0 = the pair has none).
//  * LivenessAddress — an 8-byte trailer after the handle's address: where
//    the listener's liveness socket (liveness.h) accepts TCP connections.
//  * LivenessHello — the 16 bytes a connector writes first on that socket,
//    so the listener pairs the socket with the connect message.
//
// Both carry a magic, a version and an FNV-1a checksum, so a garbage or
// truncated handle is rejected with ncclInvalidArgument instead of being fed
// to fi_av_insert.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nccom::ofi {

constexpr size_t kMaxAddrLen = 96;

struct ListenHandle {
  uint32_t magic;
  uint8_t version;
  uint8_t addr_len;
  uint16_t reserved;
  uint32_t listen_id;       // id of the receiving comm; data tags carry it
  uint32_t checksum;        // over every field except checksum and connect_cookie
  uint64_t connect_cookie;  // written by connect into the caller's copy: a pending
                            // connect resumes from it on the next call (0 = none)
  uint8_t addr[kMaxAddrLen];
};
constexpr size_t kHandleHeaderSize = offsetof(ListenHandle, addr);
static_assert(kHandleHeaderSize == 24);
static_assert(sizeof(ListenHandle) <= 128, "must fit NCCL_NET_HANDLE_MAXSIZE");

// Where the listener's liveness socket is. kNone: the listener has liveness
// off. kFabricSockaddr: the handle's own address is a sockaddr_in/in6 (tcp
// providers); connect to it with `port` instead. kIpv4: `ipv4`:`port` (shm,
// other providers). Port and address in network byte order.
enum class LivenessKind : uint8_t { kNone = 0, kFabricSockaddr = 1, kIpv4 = 2 };
struct LivenessAddress {
  uint8_t kind = 0;
  uint8_t reserved = 0;
  uint16_t port = 0;
  uint8_t ipv4[4] = {};
};
static_assert(sizeof(LivenessAddress) == 8);

struct ConnectMessage {
  uint32_t magic;
  uint8_t version;
  uint8_t addr_len;
  uint16_t reserved;
  uint32_t listen_id;  // must match the listener's id
  uint32_t checksum;
  uint64_t liveness_nonce;    // matches the hello on the liveness socket; 0 = none
  uint8_t addr[kMaxAddrLen];  // the sender's endpoint address
};

struct LivenessHello {
  uint32_t magic;
  uint32_t listen_id;
  uint64_t nonce;
};
constexpr size_t kHelloSize = sizeof(LivenessHello);
static_assert(kHelloSize == 16);

// A decoded handle or message: the fields a reader needs.
struct PeerAddress {
  uint32_t listen_id = 0;
  std::vector<uint8_t> addr;
  LivenessAddress liveness{};   // handles only
  uint64_t liveness_nonce = 0;  // connect messages only
};

// Write a handle for `listen_id` / `addr` / `liveness` into `out` (capacity
// bytes). False when it does not fit (then `out` is untouched).
bool write_handle(void* out, size_t capacity, uint32_t listen_id, const std::vector<uint8_t>& addr,
                  const LivenessAddress& liveness);
// Decode and validate; false for anything that is not a handle we wrote.
bool read_handle(const void* in, size_t capacity, PeerAddress* out);
uint64_t read_cookie(const void* handle);
void write_cookie(void* handle, uint64_t cookie);

ConnectMessage make_connect_message(uint32_t listen_id, const std::vector<uint8_t>& addr,
                                    uint64_t liveness_nonce);
// Validate a received message of `len` bytes; false for anything malformed.
bool read_connect_message(const ConnectMessage& message, size_t len, PeerAddress* out);

LivenessHello make_hello(uint32_t listen_id, uint64_t nonce);
bool hello_matches(const uint8_t (&bytes)[kHelloSize], uint32_t listen_id, uint64_t nonce);

}  // namespace nccom::ofi
