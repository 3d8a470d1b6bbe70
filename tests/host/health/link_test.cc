// The service's keep-alive link seen from the other end, by a peer played
// with a raw socket: what a real peer process would receive.
#include "health/service.h"
#include "log/log.h"
#include "peer_test_util.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <thread>

namespace nccom::health {
namespace {

using namespace peer_test;

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

// A peer that says goodbye and then resets its link (it exited with bytes
// unread) has its goodbye waiting to be read when the engine's next write on
// that link fails. Here that write is the kLeft notice of another peer's
// goodbye, handled just before in the same round: the engine must read the
// goodbye before it judges the failed write, or it calls a cleanly leaving
// process dead.
TEST(HealthLink, AGoodbyeBeforeAResetIsReadBeforeTheFailedWriteIsJudged) {
  auto loopback = SocketAddress::parse("127.0.0.1:1");
  ASSERT_TRUE(loopback);
  loopback->set_port(0);
  auto listener = Socket::listen(*loopback);
  ASSERT_TRUE(listener) << listener.error().message;
  ASSERT_TRUE(engine::set_nonblocking(listener->fd()));
  // Ring order by key: the engine (0x100) links out to p0 (0x200) and then
  // p1 (0x300), so p0's link comes first in each round; p3 (0x400) and the
  // query (0x500) connect in.
  constexpr uint64_t kMine = 0x100, kP0 = 0x200, kP1 = 0x300, kP3 = 0x400, kQuery = 0x500;
  Card mine;
  mine.service = true;
  mine.pid = static_cast<uint32_t>(getpid());
  mine.process = kMine;
  mine.endpoint = listener->local_address();
  mine.host = "here";
  std::vector<Socket> ports;
  std::vector<Card> cards{mine};
  for (uint64_t key : {kP0, kP1, kP3}) {
    auto port = Socket::listen(*loopback);
    ASSERT_TRUE(port) << port.error().message;
    Card c;
    c.service = true;
    c.pid = static_cast<uint32_t>(key >> 8);  // 2, 3, 4
    c.process = key;
    c.endpoint = port->local_address();
    c.host = "there";
    cards.push_back(c);
    ports.push_back(std::move(*port));
  }
  ServiceSettings s;
  s.client_address.clear();
  s.keepalive_ms = 10000;  // no keep-alive or silence verdict within the test
  engine::Engine e(s, std::move(*listener), Socket{}, mine);
  auto record = Registry::instance().add_comm(0xc2, 0, 4, {kMine, kP0, kP1, kP3});
  e.add_comm(record, kSecret, cards);

  const auto soon = [] { return Clock::now() + std::chrono::seconds(5); };
  std::vector<Socket> out_links;  // p0's, p1's
  for (std::size_t i = 0; i < 2; ++i) {
    auto link = ports[i].accept(soon());
    ASSERT_TRUE(link) << link.error().message;
    ASSERT_TRUE(next_frame_of(link->fd(), FrameType::kHello)) << "no hello";
    Hello answer;
    answer.process = i == 0 ? kP0 : kP1;
    ASSERT_TRUE(send_all(link->fd(), answer.frame()));
    out_links.push_back(std::move(*link));
  }
  const auto connect_in = [&](uint64_t key, Purpose purpose) -> std::optional<Socket> {
    auto sock = Socket::connect(mine.endpoint, soon());
    if (!sock) return std::nullopt;
    Hello hello;
    hello.secret = kSecret;
    hello.process = key;
    hello.purpose = purpose;
    if (!send_all(sock->fd(), hello.frame()) || !next_frame_of(sock->fd(), FrameType::kHello))
      return std::nullopt;
    return std::move(*sock);
  };
  auto p3 = connect_in(kP3, Purpose::kLink);
  ASSERT_TRUE(p3) << "p3's link was not admitted";
  auto query = connect_in(kQuery, Purpose::kQuery);
  ASSERT_TRUE(query) << "the query connection was not admitted";

  // p3 dies without a goodbye; the engine's WARN about it parks its thread.
  {
    std::lock_guard lock(g_gate.mu);
    g_gate.reset("pid 4) is dead");
  }
  log::set_warn_sink(gate_sink);
  p3->close();
  {
    std::unique_lock lock(g_gate.mu);
    ASSERT_TRUE(g_gate.cv.wait_for(lock, std::chrono::seconds(5), [] { return g_gate.frozen; }))
        << "the engine never called p3 dead";
  }
  // While it is parked: p1 says goodbye and resets, p0 says goodbye and
  // closes. Its next round sees both.
  const auto bye = frame(FrameType::kGoodbye, "");
  ASSERT_TRUE(send_all(out_links[1].fd(), bye));
  const linger reset{1, 0};
  ASSERT_EQ(::setsockopt(out_links[1].fd(), SOL_SOCKET, SO_LINGER, &reset, sizeof reset), 0);
  out_links[1].close();
  ASSERT_TRUE(send_all(out_links[0].fd(), bye));
  out_links[0].close();
  {
    std::lock_guard lock(g_gate.mu);
    g_gate.go = true;
  }
  g_gate.cv.notify_all();

  // What the engine now says of each peer.
  ASSERT_TRUE(send_all(query->fd(), frame(FrameType::kQuery, "")));
  auto snapshot = next_frame_of(query->fd(), FrameType::kSnapshot);
  log::set_warn_sink(nullptr);
  ASSERT_TRUE(snapshot) << "no snapshot";
  const std::string text(snapshot->begin(), snapshot->end());
  EXPECT_NE(text.find("link process=0000000000000200 state=left"), std::string::npos) << text;
  EXPECT_NE(text.find("link process=0000000000000300 state=left"), std::string::npos) << text;
  EXPECT_NE(text.find("link process=0000000000000400 state=dead"), std::string::npos) << text;
  for (const std::string& line : g_gate.lines) {
    EXPECT_EQ(line.find("pid 3) is dead"), std::string::npos) << line;
    EXPECT_EQ(line.find("pid 2) is dead"), std::string::npos) << line;
  }
  e.remove_comm(record.get());
  Registry::instance().remove_comm(record.get());
}

// A process that was not scheduled (stopped, swapped out) for longer than
// its peers' keep-alive timeout and health.stall_warn_s must not take its
// own absence for a peer's silence or stall: the engine's thread is held
// here past both bounds while a linked peer is quiet and a stream waits,
// then let go. It says it was away, calls no one unresponsive and gives no
// stall WARN at once, and warns only when the stream has waited the bound
// again after it came back, counting from then.
TEST(HealthLink, ATimeNotScheduledIsNotCountedAsAStall) {
  auto loopback = SocketAddress::parse("127.0.0.1:1");
  ASSERT_TRUE(loopback);
  loopback->set_port(0);
  auto listener = Socket::listen(*loopback);
  ASSERT_TRUE(listener) << listener.error().message;
  ASSERT_TRUE(engine::set_nonblocking(listener->fd()));
  constexpr uint64_t kMine = 0x100, kP3 = 0x400, kP5 = 0x600, kGhost = 0x900, kQuery = 0x500;
  constexpr uint64_t kOtherSecret = 0x0dd;
  Card mine;
  mine.service = true;
  mine.pid = static_cast<uint32_t>(getpid());
  mine.process = kMine;
  mine.endpoint = listener->local_address();
  mine.host = "here";
  auto p3_port = Socket::listen(*loopback);
  ASSERT_TRUE(p3_port) << p3_port.error().message;
  auto p5_port = Socket::listen(*loopback);
  ASSERT_TRUE(p5_port) << p5_port.error().message;
  Card p3_card;
  p3_card.service = true;
  p3_card.pid = 4;
  p3_card.process = kP3;
  p3_card.endpoint = p3_port->local_address();
  p3_card.host = "there";
  Card p5_card = p3_card;
  p5_card.pid = 6;
  p5_card.process = kP5;
  p5_card.endpoint = p5_port->local_address();
  ServiceSettings s;
  s.client_address.clear();
  s.keepalive_ms = 400;  // silent 2 s: unresponsive; away more than 1 s: an absence
  s.stall_warn_ms = 1000;
  s.stall_fail_ms = 0;
  engine::Engine e(s, std::move(*listener), Socket{}, mine);
  // The stalled stream's communicator: its other rank has no health
  // service, so the stall probe asks no one and the WARN comes at once.
  auto stalled = Registry::instance().add_comm(0xc3, 0, 2, {kMine, kGhost});
  e.add_comm(stalled, kSecret, {mine});
  // A second communicator, with p3, whose death parks the engine's thread,
  // and p5, linked and quiet (its last word is its hello).
  auto other = Registry::instance().add_comm(0xc4, 0, 3, {kMine, kP3, kP5});
  e.add_comm(other, kOtherSecret, {mine, p3_card, p5_card});

  const auto connect_in = [&](uint64_t key, uint64_t secret,
                              Purpose purpose) -> std::optional<Socket> {
    auto sock = Socket::connect(mine.endpoint, Clock::now() + std::chrono::seconds(5));
    if (!sock) return std::nullopt;
    Hello hello;
    hello.secret = secret;
    hello.process = key;
    hello.purpose = purpose;
    if (!send_all(sock->fd(), hello.frame()) || !next_frame_of(sock->fd(), FrameType::kHello))
      return std::nullopt;
    return std::move(*sock);
  };
  auto p3 = connect_in(kP3, kOtherSecret, Purpose::kLink);
  ASSERT_TRUE(p3) << "p3's link was not admitted";
  auto p5 = connect_in(kP5, kOtherSecret, Purpose::kLink);
  ASSERT_TRUE(p5) << "p5's link was not admitted";
  auto query = connect_in(kQuery, kSecret, Purpose::kQuery);
  ASSERT_TRUE(query) << "the query connection was not admitted";

  StreamProgress& sp = stalled->stream(0);
  stall(*stalled, 1);
  {
    std::lock_guard lock(g_gate.mu);
    g_gate.reset("pid 4) is dead");
  }
  log::set_warn_sink(gate_sink);
  p3->close();
  {
    std::unique_lock lock(g_gate.mu);
    ASSERT_TRUE(g_gate.cv.wait_for(lock, std::chrono::seconds(5), [] { return g_gate.frozen; }))
        << "the engine never called p3 dead";
  }
  // The engine's thread is away for 4 s: the condition under test. (A
  // stall counted from the last progress would be WARNed at once, at least
  // kAway old; counted from the return, it is a bound old when it is, so
  // a late look on a loaded machine has kAway - stall_warn_ms of room.)
  constexpr auto kAway = std::chrono::milliseconds(4000);
  std::this_thread::sleep_for(kAway);
  {
    std::lock_guard lock(g_gate.mu);
    g_gate.go = true;
  }
  g_gate.cv.notify_all();
  const auto back = Clock::now();

  // A query answered after its return: by then its next round has run.
  ASSERT_TRUE(send_all(query->fd(), frame(FrameType::kQuery, "")));
  ASSERT_TRUE(next_frame_of(query->fd(), FrameType::kSnapshot)) << "no snapshot";
  {
    std::lock_guard lock(g_gate.mu);
    bool knew = false;
    for (const std::string& line : g_gate.lines) {
      knew = knew || line.find("health: this process was not scheduled for") != std::string::npos;
      EXPECT_EQ(line.find("(health.stall_warn_s)"), std::string::npos) << line;
      EXPECT_EQ(line.find(" is unresponsive"), std::string::npos) << line;
    }
    EXPECT_TRUE(knew) << "no WARN about the absence";
  }
  // The stream still waits: a bound after the return, it is a stall, and
  // its idle time counts from the return, not from the last progress.
  const auto stall = warned("(health.stall_warn_s)");
  log::set_warn_sink(nullptr);
  ASSERT_TRUE(stall) << "no stall WARN after the return";
  EXPECT_GE(Clock::now() - back, std::chrono::milliseconds(s.stall_warn_ms)) << *stall;
  const auto idle = stall->find("no progress for ");
  ASSERT_NE(idle, std::string::npos) << *stall;
  EXPECT_LT(std::stol(stall->substr(idle + 16)), kAway.count()) << *stall;
  sp.running = false;
  e.remove_comm(other.get());
  e.remove_comm(stalled.get());
  Registry::instance().remove_comm(other.get());
  Registry::instance().remove_comm(stalled.get());
}

}  // namespace
}  // namespace nccom::health
