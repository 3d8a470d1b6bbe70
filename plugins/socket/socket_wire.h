// What goes over the wire (and through the listen/connect handle). The
// handle crosses between peers of the same build over the host's bootstrap;
// the other records travel on the plugin's own TCP sockets. Every field read
// from a peer is validated before use.
#pragma once

#include <nccom/net_common.h>

#include <cstddef>
#include <cstdint>

namespace nccom::socket {

inline constexpr uint32_t kHandleMarker = 0x4b53434e;  // "NCSK", handle format 1
inline constexpr uint32_t kHelloMarker = 0x4c454843;   // "CHEL", sent first on each socket

// The listen/connect handle: where to connect, and the secret a connecting
// peer must present. `connect_token` is local to the connecting process: it
// is 0 as written by listen and names the in-progress connection while a
// non-blocking connect is being polled (it is never dereferenced).
struct WireHandle {
  uint32_t marker;
  uint16_t family;   // AF_INET or AF_INET6
  uint16_t port;     // network byte order
  uint8_t addr[16];  // IPv4 in the first 4 bytes
  uint32_t scope_id;
  uint32_t reserved;
  uint64_t magic;
  uint64_t connect_token;
};
static_assert(sizeof(WireHandle) == 48);
static_assert(sizeof(WireHandle) <= NCCL_NET_HANDLE_MAXSIZE_V4);

// First bytes on every socket of a connection. index 0 is the control
// socket, 1..n the data sockets. conn_id groups the sockets of one connect.
// eager_max (+ eager_max_high) / eager_credits: the connecting side's offer
// to send messages of up to that many bytes eagerly, at most eager_credits of
// them unconsumed at the receiver (all 0: no eager path; a peer built before
// the eager path sends zeros there, one built while the limit fit 16 bits
// sends 0 in eager_max_high). The acceptor takes the offer, or not, with its
// first control record (kMsgEagerGrant); it reads them from the control
// socket's hello.
struct Hello {
  uint32_t marker;
  uint16_t index;
  uint16_t nsocks_per_thread;
  uint16_t nthreads;
  uint16_t eager_max;  // the offer's size limit, bits 0..15
  uint16_t eager_credits;
  uint16_t eager_max_high;  // bits 16..31
  uint64_t magic;
  uint64_t conn_id;
};
static_assert(sizeof(Hello) == 32);
inline size_t hello_eager_max(const Hello& h) {
  return h.eager_max | (static_cast<size_t>(h.eager_max_high) << 16);
}
inline void set_hello_eager_max(Hello& h, uint32_t bytes) {
  h.eager_max = static_cast<uint16_t>(bytes & 0xffff);
  h.eager_max_high = static_cast<uint16_t>(bytes >> 16);
}

// Control socket records, each message numbered by the sender (id, from 0):
//  sender -> receiver
//   kMsgHeader      rendezvous announce: tag, id, value = size. The payload
//                   follows on the data sockets after the clear-to-send.
//   kMsgEager       tag, id, value = size, then `size` payload bytes right
//                   here on the control socket. Needs a credit.
//  receiver -> sender
//   kMsgEagerGrant  the first record, only if the hello offered eager:
//                   id = accepted eager_max, value = accepted credits
//                   (at most what was offered).
//   kMsgClearToSend id, value = kCtsAccept or kCtsTooLarge.
//   kMsgCredit      value = eager credits handed back (messages consumed).
//   kMsgEagerDropped tag, id, value = size: an eager message that did not fit
//                   its receive buffer (the send had completed already; the
//                   sender only logs it).
enum : uint32_t {
  kMsgHeader = 1,
  kMsgClearToSend = 2,
  kMsgEager = 3,
  kMsgEagerGrant = 4,
  kMsgCredit = 5,
  kMsgEagerDropped = 6,
};
enum : uint64_t { kCtsAccept = 0, kCtsTooLarge = 1 };
struct CtrlMsg {
  uint32_t type;
  int32_t tag;
  uint64_t id;
  uint64_t value;  // header/eager: size in bytes; clear-to-send: status; ...
};
static_assert(sizeof(CtrlMsg) == 24);

// The eager path as this build offers and accepts it: messages of at most
// kEagerMaxBytes go on the control socket without a clear-to-send, at most
// kEagerCredits of them unconsumed at the receiver (so at most
// kEagerMaxBytes x kEagerCredits = 2 MiB held per receiving comm). 128 KiB:
// a 64 KiB message with its user's own header in front still goes eager.
inline constexpr size_t kEagerMaxBytes = 128 * 1024;
inline constexpr int kEagerCredits = 16;
static_assert(kEagerMaxBytes <= UINT32_MAX && kEagerCredits <= UINT16_MAX);

// Messages larger than this are striped over the data sockets, in chunks of
// at least this size.
inline constexpr size_t kStripeThreshold = 64 * 1024;

}  // namespace nccom::socket
