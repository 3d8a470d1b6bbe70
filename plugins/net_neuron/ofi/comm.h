// The three kinds of comm the ABI hands out, and memory registrations.
//
//  * listen comm: an endpoint plus one posted control receive for the
//    connect message. accept() hands the endpoint over to the recv comm it
//    creates, so every endpoint has exactly one owner at any time; one listen
//    comm accepts one connection (as the host uses it).
//  * send comm: its own endpoint; the listener's address is its peer. While
//    its connect message is in flight it lives in the plugin's table of
//    pending connects, found again through the cookie written into the
//    caller's handle.
//  * recv comm: the listener's endpoint; the sender's address (from the
//    connect message) is its peer, for iread/iwrite.
// Every data-path message of a pair carries the recv comm's id in its tag.
// With liveness on, the listen comm also owns a TCP listening socket, and a
// send/recv pair one TCP connection that tells each side when the other is
// gone (liveness.h).
#pragma once

#include "endpoint.h"
#include "liveness.h"
#include "wire.h"

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace nccom::ofi {

enum class CommKind : uint8_t { kListen, kSend, kRecv };

// Memory registration keys as getMrKey reports them and iread/iwrite take
// them back.
//
// With FI_MR_VIRT_ADDR (EFA, shm) the key is the provider's key and remote
// addresses are virtual addresses, as the ABI has them. Without it (tcp via
// ofi_rxm) libfabric addresses a region by its offset, yet the host only has
// the peer's virtual address. So for those providers — which let us pick the
// key (no FI_MR_PROV_KEY) — the key we report carries the region base too:
//   reported key = base << 16 | key id   (user-space addresses are < 2^48)
// and iread/iwrite turn (address, key) back into (offset, key id). The host
// treats the key as opaque, so both forms fit the ABI unchanged.
struct RemoteTarget {
  uint64_t addr = 0;  // what fi_read/fi_write take: virtual address or offset
  uint64_t key = 0;   // the provider's key
};

// The key to report for a region at `base` registered with provider key
// `provider_key` / our `key_id`. False when it cannot be expressed.
bool encode_remote_key(const NicCaps& caps, uint64_t base, uint64_t provider_key, uint16_t key_id,
                       uint64_t* out);
// False when `remote` lies below the region base carried in `reported_key`.
bool decode_remote_key(const NicCaps& caps, uint64_t remote, uint64_t reported_key,
                       RemoteTarget* out);

struct Comm;

struct MemoryRegion {
  Comm* owner = nullptr;
  MrPtr mr;
  uint64_t base = 0;
  size_t size = 0;
  uint16_t key_id = 0;      // the key we requested (0 when the provider chose)
  uint64_t remote_key = 0;  // what getMrKey reports (see above)
  bool remote_key_valid = false;
  void* desc = nullptr;

  bool covers(const void* buf, size_t len) const {
    const auto start = reinterpret_cast<uint64_t>(buf);
    return start >= base && len <= size && start - base <= size - len;
  }
};

// MR keys we choose ourselves (no FI_MR_PROV_KEY): small per-domain ids.
class KeyPool {
 public:
  // 0 when all 65535 ids are taken.
  uint16_t take();
  void give_back(uint16_t id);

 private:
  uint16_t next_ = 1;
  std::vector<uint16_t> free_;
};

struct Comm {
  Comm(CommKind kind, int dev, uint32_t id) : kind(kind), dev(dev), id(id) {}
  ~Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  // A free request of the pool, reset for `op`; nullptr when
  // NCCL_NET_MAX_REQUESTS are in flight (the caller gets a NULL request).
  Request* allocate_request(Op op);
  void release_request(Request* request);
  // Fail a request that is still posted because its peer is gone: the host
  // is done with it, the slot stays taken (kAbandoned) until the comm closes.
  void abandon_request(Request* request);
  bool owns_request(const Request* request) const;
  MemoryRegion* find_region(const void* mhandle) const;
  // Closes the endpoint, the MRs, then the rest; no completion arrives after.
  void close_resources();

  const CommKind kind;
  const int dev;
  const uint32_t id;  // the recv comm's id (data tags carry it)
  std::unique_ptr<Endpoint> endpoint;
  fi_addr_t peer = FI_ADDR_UNSPEC;
  std::array<Request, kMaxRequests> requests{};
  int requests_in_use = 0;
  std::vector<std::unique_ptr<MemoryRegion>> regions;
  KeyPool keys;

  // Connection setup (listen comm: the connect receive; send comm: the send).
  Request control{};
  ConnectMessage control_message{};
  fid_mr* control_mr = nullptr;
  bool accepted = false;  // listen comm: its connection was handed out

  // Liveness: the listen comm's socket, and a valid connect message that
  // waits for its liveness socket's hello; the watch of a send/recv comm.
  std::unique_ptr<LivenessListener> liveness_listener;
  bool have_sender = false;
  PeerAddress sender;
  PeerWatch watch;
};

// "send comm 12 (0x5555...)" for log lines.
std::string comm_label(const Comm& comm);

// Open an endpoint on one rail of `device` (round-robin) and post the
// connect receive, tagged with the listen comm's `id`; with liveness on, open
// the liveness socket too.
Status open_listen_comm(const Device& device, int dev, uint32_t id, std::unique_ptr<Comm>* out);
// Open a send comm to the listener described by `peer`, post its connect
// message and, when both sides have liveness on, start the liveness connect.
Status open_send_comm(const Device& device, int dev, const PeerAddress& peer,
                      std::unique_ptr<Comm>* out);
// Progress a pending connect: true once the connect message was delivered
// and the liveness hello written.
Status poll_connect(Comm& send, bool* connected);
// Progress a listen comm: a recv comm once a valid connect message arrived
// (and, when it asks for one, the liveness socket carrying its nonce).
Status poll_accept(Comm& listen, std::unique_ptr<Comm>* recv);

}  // namespace nccom::ofi
