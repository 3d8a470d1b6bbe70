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
#include <optional>
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

// A raw peer's side of an out-link of the service: accepts it, reads its
// hello and answers it, so that the link is established on both sides.
struct RawPeer {
  Socket port;
  Socket link;
  uint64_t key = 0;
};

bool read_exactly(int fd, uint8_t* out, std::size_t n) {
  std::size_t got = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (got < n && Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const ssize_t r = ::recv(fd, out + got, n - got, 0);
    if (r <= 0) return false;
    got += static_cast<std::size_t>(r);
  }
  return got == n;
}

// Frames from `fd` until one of `type` (returned with its payload) or 5 s.
std::optional<std::vector<uint8_t>> next_frame_of(int fd, FrameType type) {
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (Clock::now() < deadline) {
    uint8_t head[kFrameHeaderBytes];
    if (!read_exactly(fd, head, sizeof head)) return std::nullopt;
    auto h = decode_header(head, sizeof head);
    if (!h) return std::nullopt;
    std::vector<uint8_t> payload(h->length);
    if (h->length > 0 && !read_exactly(fd, payload.data(), payload.size())) return std::nullopt;
    if (h->type == type) return payload;
  }
  return std::nullopt;
}

// Two peers played with raw sockets link with the service (its two ring
// successors); one says goodbye and leaves: the other hears of it through
// the service (kLeft with the leaver's key), so that it does not take the
// leaver's closed port for a death when its own ring reshapes.
TEST(HealthLink, AGoodbyeIsPassedOnToTheOtherLinks) {
  auto loopback = SocketAddress::parse("127.0.0.1:1");
  ASSERT_TRUE(loopback);
  loopback->set_port(0);
  std::vector<RawPeer> peers(2);
  for (std::size_t i = 0; i < peers.size(); ++i) {
    auto port = Socket::listen(*loopback);
    ASSERT_TRUE(port) << port.error().message;
    peers[i].port = std::move(*port);
    peers[i].key = kPeerKey + i;
  }
  ServiceSettings s;
  s.client_address.clear();
  s.keepalive_ms = 50;
  const Card mine = ensure_service(s, *loopback, "here");
  ASSERT_TRUE(mine.service);
  std::vector<Card> cards{mine};
  std::vector<uint64_t> keys{mine.process};
  for (const RawPeer& p : peers) {
    Card c;
    c.service = true;
    c.pid = 1;
    c.process = p.key;
    c.endpoint = p.port.local_address();
    c.host = "there";
    cards.push_back(c);
    keys.push_back(p.key);
  }
  auto record = Registry::instance().add_comm(0xc1, 0, 3, keys);
  add_comm(record, kSecret, cards);

  for (RawPeer& p : peers) {
    auto link = p.port.accept(Clock::now() + std::chrono::seconds(5));
    ASSERT_TRUE(link) << link.error().message;
    p.link = std::move(*link);
    auto hello = next_frame_of(p.link.fd(), FrameType::kHello);
    ASSERT_TRUE(hello) << "no hello";
    Hello answer;
    answer.process = p.key;
    const auto bytes = answer.frame();
    ASSERT_EQ(::send(p.link.fd(), bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
  // Both links carry keep-alives once established: wait for one each.
  for (RawPeer& p : peers)
    ASSERT_TRUE(next_frame_of(p.link.fd(), FrameType::kKeepAlive)) << "no keep-alive";

  const auto bye = frame(FrameType::kGoodbye, "");
  ASSERT_EQ(::send(peers[0].link.fd(), bye.data(), bye.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(bye.size()));
  peers[0].link.close();
  auto left = next_frame_of(peers[1].link.fd(), FrameType::kLeft);
  ASSERT_TRUE(left) << "the other link never heard of the goodbye";
  auto key = decode_left(left->data(), left->size());
  ASSERT_TRUE(key) << key.error().message;
  EXPECT_EQ(*key, peers[0].key);

  remove_comm(record.get());
  Registry::instance().remove_comm(record.get());
  stop_service();
}

}  // namespace
}  // namespace nccom::health
