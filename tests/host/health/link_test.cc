// The service's keep-alive link seen from the other end, by a peer played
// with a raw socket: what a real peer process would receive.
#include "bootstrap/socket.h"
#include "health/service.h"
#include "health/state.h"
#include "health/wire.h"

#include <poll.h>
#include <sys/socket.h>

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

namespace nccom::health {
namespace {

using bootstrap::Socket;
using bootstrap::SocketAddress;
using Clock = std::chrono::steady_clock;

constexpr uint64_t kSecret = 0x5ec12e7;
constexpr uint64_t kPeerKey = 0x7777;

// Reads frames from `fd` until EOF (or 5 s); returns their types.
std::vector<FrameType> frames_until_eof(int fd) {
  std::vector<FrameType> out;
  std::vector<uint8_t> in;
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    uint8_t buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    in.insert(in.end(), buf, buf + n);
    while (in.size() >= kFrameHeaderBytes) {
      auto h = decode_header(in.data(), in.size());
      if (!h || in.size() < kFrameHeaderBytes + h->length) break;
      out.push_back(h->type);
      in.erase(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(kFrameHeaderBytes + h->length));
    }
  }
  return out;
}

// A link whose hello the peer has read but not answered is established on
// the peer's side: when the last communicator goes, the service must say
// goodbye on it too, or the peer calls this process dead at a clean exit.
TEST(HealthLink, AnUnansweredLinkStillGetsAGoodbye) {
  auto loopback = SocketAddress::parse("127.0.0.1:1");
  ASSERT_TRUE(loopback);
  loopback->set_port(0);
  auto peer_port = Socket::listen(*loopback);
  ASSERT_TRUE(peer_port) << peer_port.error().message;

  ServiceSettings s;
  s.client_address.clear();
  s.keepalive_ms = 50;
  const Card mine = ensure_service(s, *loopback, "here");
  ASSERT_TRUE(mine.service);
  Card peer;
  peer.service = true;
  peer.pid = 1;
  peer.process = kPeerKey;
  peer.endpoint = peer_port->local_address();
  peer.host = "there";
  auto record = Registry::instance().add_comm(0xc0, 0, 2, {mine.process, kPeerKey});
  add_comm(record, kSecret, {mine, peer});

  // The service links to its only peer: read its hello, answer nothing.
  auto link = peer_port->accept(Clock::now() + std::chrono::seconds(5));
  ASSERT_TRUE(link) << link.error().message;
  uint8_t head[kFrameHeaderBytes + kHelloBytes];
  std::size_t got = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (got < sizeof head && Clock::now() < deadline) {
    pollfd p{link->fd(), POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = ::recv(link->fd(), head + got, sizeof head - got, 0);
    ASSERT_GT(n, 0) << "the link closed before its hello";
    got += static_cast<std::size_t>(n);
  }
  ASSERT_EQ(got, sizeof head) << "no hello within 5 s";
  auto h = decode_header(head, sizeof head);
  ASSERT_TRUE(h);
  ASSERT_EQ(h->type, FrameType::kHello);
  auto hello = Hello::decode(head + kFrameHeaderBytes, h->length);
  ASSERT_TRUE(hello);
  EXPECT_EQ(hello->secret, kSecret);
  EXPECT_EQ(hello->process, mine.process);

  remove_comm(record.get());  // the last one: goodbyes before it returns
  Registry::instance().remove_comm(record.get());
  const std::vector<FrameType> after = frames_until_eof(link->fd());
  ASSERT_FALSE(after.empty()) << "the link closed without a goodbye";
  EXPECT_EQ(after.back(), FrameType::kGoodbye);
  stop_service();
}

}  // namespace
}  // namespace nccom::health
