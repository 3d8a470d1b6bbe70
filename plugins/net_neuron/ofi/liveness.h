// Peer liveness for send and recv comms (docs/internals/net-ofi.md, "Peer liveness";
// why: docs/decisions/net-ofi.md).
//
// RDM endpoints are connectionless: a receive posted for a peer that closed
// its comm or died is simply never matched, and test() would report done=0
// forever. So every connected pair also holds one TCP connection — the
// liveness channel — set up during connect/accept: listen opens a TCP
// listening socket whose address travels in the listen handle, connect
// connects to it and writes a hello carrying a nonce that its connect message
// also carries, accept pairs the two. Nothing flows on it afterwards except
// one "goodbye" byte when a comm is closed. The kernel closes the socket when
// the process ends (however it ends), so the surviving side sees EOF or a
// reset; a crashed host or a cut link is caught by TCP keepalive.
//
// test() on a pending request (and every new post) asks the watch with a
// non-blocking poll(), at most once per check period, so the data path pays
// one clock read per call. Once the peer is gone, requests get a grace
// period to finish — data sent just before a close may still be arriving on
// the fabric, which the socket's EOF can overtake — then fail with
// ncclRemoteError.
#pragma once

#include "common.h"
#include "wire.h"

#include <memory>
#include <string>
#include <vector>

namespace nccom::ofi {

struct LivenessConfig {
  bool enabled = true;
  int check_ms = 100;  // at most one poll() per comm per period
  int grace_ms = 500;  // requests may still complete this long after detection
};
// The configuration new comms take (net_config.cc, the plugins.ofi.liveness* knobs).
LivenessConfig liveness_config();
// enabled 0/1, check_ms 1..60000, grace_ms 0..600000; else ncclInvalidArgument.
Status configure_liveness(int enabled, int check_ms, int grace_ms);

int64_t monotonic_ns();
// A non-zero random nonce for one connection.
uint64_t make_nonce();
// "192.0.2.2:45123", "[fd00::2]:34133", "fi_shm://6922:0:0" or hex bytes.
std::string describe_address(const std::vector<uint8_t>& addr);

// An owned socket descriptor.
class SocketFd {
 public:
  SocketFd() = default;
  explicit SocketFd(int fd) : fd_(fd) {}
  SocketFd(SocketFd&& other) noexcept : fd_(other.release()) {}
  SocketFd& operator=(SocketFd&& other) noexcept;
  ~SocketFd() { reset(); }
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release();
  void reset();

 private:
  int fd_ = -1;
};

// The listen comm's TCP listening socket and the connections it accepted
// whose hello has not matched yet (a bounded few: strays are dropped).
class LivenessListener {
 public:
  // Binds next to the endpoint: on the endpoint's own address when it is a
  // sockaddr (tcp providers), on loopback for shm, otherwise on the first
  // up, non-loopback IPv4 interface (loopback when there is none). Failure
  // is logged; the caller then goes without liveness.
  static Status open(uint32_t addr_format, const std::vector<uint8_t>& ep_addr,
                     std::unique_ptr<LivenessListener>* out);
  const LivenessAddress& address() const { return address_; }
  // Accepts and reads hellos without blocking. The socket whose hello is
  // (listen_id, nonce), or an invalid SocketFd when it has not arrived yet.
  SocketFd take(uint32_t listen_id, uint64_t nonce);

 private:
  struct Pending {
    SocketFd fd;
    uint8_t hello[kHelloSize] = {};
    size_t got = 0;
  };
  SocketFd fd_;
  LivenessAddress address_;
  std::vector<Pending> pending_;
};

// One side's view of its peer, for a send or recv comm. Disabled (and free)
// when the pair has no liveness channel.
class PeerWatch {
 public:
  // `label` names the comm in log lines ("recv comm 12 (0x...)"), `peer` the
  // peer's fabric address.
  void name(std::string label, std::string peer);
  // Connect side: a non-blocking TCP connect to the listener's liveness
  // socket, the hello queued behind it.
  Status start_connect(const PeerAddress& listener, uint64_t nonce);
  // Advances that connect; *ready once the hello is written.
  Status poll_connect(bool* ready);
  // Accept side: the socket the listener paired with the connect message.
  void adopt(SocketFd fd);

  bool enabled() const { return fd_.valid(); }
  // True once the peer has been gone for longer than the grace period.
  // Polls the socket at most once per check period; logs the detection once.
  bool peer_lost(int64_t now_ns);
  // "peer 192.0.2.2:45123 closed its comm": for the log line of a failed call.
  std::string what_happened() const;
  const std::string& label() const { return label_; }
  // The comm is closing: send the goodbye byte (so the peer can tell a close
  // from a crash) and close the socket.
  void close_gracefully();

 private:
  void inspect(int64_t now_ns);

  SocketFd fd_;
  std::string label_;
  std::string peer_;
  std::string reason_;
  bool connecting_ = false;
  LivenessHello hello_{};
  size_t hello_sent_ = 0;
  bool goodbye_seen_ = false;
  int64_t check_ns_ = 0;
  int64_t grace_ns_ = 0;
  int64_t next_check_ns_ = 0;
  int64_t gone_at_ns_ = -1;
};

}  // namespace nccom::ofi
