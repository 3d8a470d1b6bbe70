// The other end of a socket-plugin connection played with raw TCP sockets
// (suites NetSocketEagerWire, NetSocketFailure): a peer that sends exactly
// the records a test scripts, and stops exactly where it says.
#pragma once

#include "socket_fixture.h"
#include "socket_wire.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace nccom_test {

namespace wire = nccom::socket;

// A blocking loopback socket whose reads and writes give up after kWait.
struct RawSocket {
  int fd = -1;
  RawSocket() = default;
  explicit RawSocket(int f) : fd(f) {
    timeval tv{static_cast<time_t>(kWait.count()), 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  RawSocket(RawSocket&& o) noexcept : fd(o.fd) { o.fd = -1; }
  RawSocket& operator=(RawSocket&& o) noexcept {
    if (this != &o) {
      if (fd >= 0) close(fd);
      fd = o.fd;
      o.fd = -1;
    }
    return *this;
  }
  ~RawSocket() {
    if (fd >= 0) close(fd);
  }
  bool write_all(const void* p, size_t n) {
    auto* c = static_cast<const char*>(p);
    while (n > 0) {
      ssize_t k = send(fd, c, n, MSG_NOSIGNAL);
      if (k <= 0) return false;
      c += k;
      n -= static_cast<size_t>(k);
    }
    return true;
  }
  bool read_all(void* p, size_t n) {
    auto* c = static_cast<char*>(p);
    while (n > 0) {
      ssize_t k = recv(fd, c, n, 0);
      if (k <= 0) return false;
      c += k;
      n -= static_cast<size_t>(k);
    }
    return true;
  }
};

// Where a listen handle says the listener is (IPv4).
inline sockaddr_in listen_address(const wire::WireHandle& h) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = h.port;
  memcpy(&addr.sin_addr, h.addr, 4);
  return addr;
}

inline wire::Hello legacy_hello(uint64_t magic, uint16_t index) {
  // As a build without the eager path sends it: the eager fields were reserved, zero.
  wire::Hello h{};
  h.marker = wire::kHelloMarker;
  h.index = index;
  h.nsocks_per_thread = 1;
  h.nthreads = 1;
  h.magic = magic;
  h.conn_id = 0x1234;
  return h;
}

// Listens on `dev`, connects two raw sockets (control, data) to it as a peer
// whose hello offers eager_max / eager_credits (0, 0: a build without the
// eager path), and accepts. out->recv_comm stays NULL on failure.
struct RawPeer {
  void* listen = nullptr;
  void* recv_comm = nullptr;
  std::vector<RawSocket> socks;
};

inline void dial_as_raw_peer(const ncclNet_v6_t* net, int dev, uint32_t eager_max,
                             uint16_t eager_credits, RawPeer* out) {
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  ASSERT_EQ(net->listen(dev, handle, &out->listen), ncclSuccess);
  wire::WireHandle h;
  memcpy(&h, handle, sizeof h);
  ASSERT_EQ(h.family, AF_INET);
  const sockaddr_in addr = listen_address(h);
  for (uint16_t i = 0; i < 2; ++i) {
    out->socks.emplace_back(socket(AF_INET, SOCK_STREAM, 0));
    ASSERT_EQ(connect(out->socks[i].fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
    wire::Hello hello = legacy_hello(h.magic, i);
    wire::set_hello_eager_max(hello, eager_max);
    hello.eager_credits = eager_credits;
    ASSERT_TRUE(out->socks[i].write_all(&hello, sizeof hello));
  }
  auto deadline = Clock::now() + kWait;
  while (out->recv_comm == nullptr && Clock::now() < deadline)
    ASSERT_EQ(net->accept(out->listen, &out->recv_comm), ncclSuccess);
}

// A raw listener on 127.0.0.1 and a handle pointing at it.
struct RawListener {
  RawSocket sock;
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  static constexpr uint64_t kMagic = 0xfeedfacecafe0001ull;

  bool open() {
    sock = RawSocket(socket(AF_INET, SOCK_STREAM, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (bind(sock.fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(sock.fd, 8) != 0 || getsockname(sock.fd, reinterpret_cast<sockaddr*>(&a), &len))
      return false;
    wire::WireHandle h{};
    h.marker = wire::kHandleMarker;
    h.family = AF_INET;
    h.port = a.sin_port;
    memcpy(h.addr, &a.sin_addr, 4);
    h.magic = kMagic;
    memcpy(handle, &h, sizeof h);
    return true;
  }
};

}  // namespace nccom_test
