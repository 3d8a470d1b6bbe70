// The service's keep-alive link seen from the other end, by a peer played
// with a raw socket: what a real peer process would receive.
#include "bootstrap/socket.h"
#include "health/engine.h"
#include "health/service.h"
#include "health/state.h"
#include "health/wire.h"
#include "log/log.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
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

// The engine's WARN lines, and a way to hold its thread still: the WARN
// sink runs on the engine's thread, so a line that names `freeze_on` parks
// that thread, outside its poll, until the test lets it go.
struct WarnGate {
  std::mutex mu;
  std::condition_variable cv;
  std::string freeze_on;
  bool frozen = false;
  bool go = false;
  std::vector<std::string> lines;

  void reset(std::string freeze) {  // with `mu` held
    freeze_on = std::move(freeze);
    frozen = go = false;
    lines.clear();
  }
};
WarnGate g_gate;

void gate_sink(const char* line, std::size_t length) {
  std::unique_lock lock(g_gate.mu);
  g_gate.lines.emplace_back(line, length);
  g_gate.cv.notify_all();
  if (g_gate.freeze_on.empty() || g_gate.lines.back().find(g_gate.freeze_on) == std::string::npos)
    return;
  g_gate.frozen = true;
  g_gate.cv.notify_all();
  g_gate.cv.wait_for(lock, std::chrono::seconds(10), [] { return g_gate.go; });
}

bool send_all(int fd, const std::vector<uint8_t>& bytes) {
  return ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
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

// The first WARN line that has `text` (waited for up to 5 s), or nothing.
std::optional<std::string> warned(const std::string& text) {
  std::unique_lock lock(g_gate.mu);
  std::optional<std::string> found;
  g_gate.cv.wait_for(lock, std::chrono::seconds(5), [&] {
    for (const std::string& line : g_gate.lines) {
      if (line.find(text) != std::string::npos) found = line;
    }
    return found.has_value();
  });
  return found;
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
  sp.waiting_peer = 1;
  sp.waiting_known = true;  // as the scheduler publishes it
  sp.started = 1;
  sp.last_progress_ms = now_ms();
  sp.running = true;
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
  // The engine's thread is away for 2.5 s: the condition under test.
  constexpr auto kAway = std::chrono::milliseconds(2500);
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

// A member that is dead or has freed its communicators takes no further
// part, so a stall in its communicator cannot end: the stall probe fails
// the stream at the WARN instead of waiting for health.stall_fail_s (never,
// here). Three communicators stall, each waiting on a live process that
// does not answer: one with a dead member (its port refuses), one with a
// member that said goodbye, and one with neither, which only warns.
TEST(HealthLink, AStallInACommunicatorWithALostMemberFailsAtTheWarning) {
  auto loopback = SocketAddress::parse("127.0.0.1:1");
  ASSERT_TRUE(loopback);
  loopback->set_port(0);
  auto listener = Socket::listen(*loopback);
  ASSERT_TRUE(listener) << listener.error().message;
  ASSERT_TRUE(engine::set_nonblocking(listener->fd()));
  // Ring order by key: the engine (0x100) links out to 0x200 (silent) and
  // 0x300 (dead: refused), and 0x400 (leaves) links in.
  constexpr uint64_t kMine = 0x100, kSilent = 0x200, kDead = 0x300, kLeaves = 0x400;
  Card mine;
  mine.service = true;
  mine.pid = static_cast<uint32_t>(getpid());
  mine.process = kMine;
  mine.endpoint = listener->local_address();
  mine.host = "here";
  const auto card = [](uint64_t key, const SocketAddress& at) {
    Card c;
    c.service = true;
    c.pid = static_cast<uint32_t>(key >> 8);  // 2, 3, 4
    c.process = key;
    c.endpoint = at;
    c.host = "there";
    return c;
  };
  // The silent process accepts nothing: its connections wait in the
  // backlog and no query is answered. The dead one's port is closed.
  auto silent_port = Socket::listen(*loopback);
  ASSERT_TRUE(silent_port) << silent_port.error().message;
  auto leaves_port = Socket::listen(*loopback);
  ASSERT_TRUE(leaves_port) << leaves_port.error().message;
  auto dead_port = Socket::listen(*loopback);
  ASSERT_TRUE(dead_port) << dead_port.error().message;
  const Card silent = card(kSilent, silent_port->local_address());
  const Card leaves = card(kLeaves, leaves_port->local_address());
  const Card dead = card(kDead, dead_port->local_address());
  dead_port->close();

  ServiceSettings s;
  s.client_address.clear();
  s.keepalive_ms = 10000;  // no silence verdict on a link within the test
  s.query_timeout_ms = 300;
  s.stall_warn_ms = 1000;
  s.stall_fail_ms = 0;  // never: only a lost member fails a stream
  {
    std::lock_guard lock(g_gate.mu);
    g_gate.reset("");
  }
  log::set_warn_sink(gate_sink);
  engine::Engine e(s, std::move(*listener), Socket{}, mine);
  auto with_dead = Registry::instance().add_comm(0xd1, 0, 3, {kMine, kSilent, kDead});
  e.add_comm(with_dead, kSecret, {mine, silent, dead});
  auto with_left = Registry::instance().add_comm(0xd2, 0, 3, {kMine, kSilent, kLeaves});
  e.add_comm(with_left, kSecret, {mine, silent, leaves});
  auto whole = Registry::instance().add_comm(0xd3, 0, 2, {kMine, kSilent});
  e.add_comm(whole, kSecret, {mine, silent});

  // The leaving process links in (the engine is its successor), says
  // goodbye and closes, as a process does when it frees its communicators.
  auto link = Socket::connect(mine.endpoint, Clock::now() + std::chrono::seconds(5));
  ASSERT_TRUE(link) << link.error().message;
  Hello hello;
  hello.secret = kSecret;
  hello.process = kLeaves;
  hello.purpose = Purpose::kLink;
  ASSERT_TRUE(send_all(link->fd(), hello.frame()));
  ASSERT_TRUE(next_frame_of(link->fd(), FrameType::kHello)) << "the link was not admitted";
  ASSERT_TRUE(send_all(link->fd(), frame(FrameType::kGoodbye, "")));
  link->close();

  // Each stream waits on rank 1, the silent process.
  for (auto* c : {with_dead.get(), with_left.get(), whole.get()}) {
    StreamProgress& sp = c->stream(0);
    sp.waiting_peer = 1;
    sp.waiting_known = true;  // as the scheduler publishes it
    sp.started = 1;
    sp.last_progress_ms = now_ms();
    sp.running = true;
  }
  const auto verdict = [](CommRecord* c) -> std::optional<std::string> {
    StreamProgress& sp = c->stream(0);
    if (!sp.has_verdict.load(std::memory_order_acquire)) return std::nullopt;
    std::lock_guard lock(sp.mu);
    return sp.verdict.text;
  };
  // The whole communicator's stall is a WARN; once it is logged, the
  // probes of all three have had their answers (they start together).
  const auto warning = warned("rank 0 of comm 00000000000000d3");
  log::set_warn_sink(nullptr);
  ASSERT_TRUE(warning) << "no stall WARN for the communicator without a lost member";
  EXPECT_NE(warning->find("(health.stall_warn_s): waiting on rank 1 (host there, pid 2): "
                          "unresponsive"),
            std::string::npos)
      << *warning;
  EXPECT_FALSE(verdict(whole.get())) << *verdict(whole.get());
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while ((!verdict(with_dead.get()) || !verdict(with_left.get())) && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto failed_dead = verdict(with_dead.get());
  ASSERT_TRUE(failed_dead) << "the stall with a dead member did not fail";
  EXPECT_NE(failed_dead->find("(health.stall_warn_s): waiting on rank 1 (host there, pid 2): "
                              "unresponsive"),
            std::string::npos)
      << *failed_dead;
  EXPECT_NE(failed_dead->find("; failing now, not after health.stall_fail_s: rank 2 (host there, "
                              "pid 3) of this communicator is dead, so none of its collectives "
                              "can complete"),
            std::string::npos)
      << *failed_dead;
  const auto failed_left = verdict(with_left.get());
  ASSERT_TRUE(failed_left) << "the stall with a member that left did not fail";
  EXPECT_NE(failed_left->find("; failing now, not after health.stall_fail_s: rank 2 (host there, "
                              "pid 4) of this communicator has freed its communicators"),
            std::string::npos)
      << *failed_left;
  {
    std::lock_guard lock(g_gate.mu);
    for (const std::string& line : g_gate.lines) {
      EXPECT_EQ(line.find("comm 00000000000000d1, proxy stream"), std::string::npos) << line;
      EXPECT_EQ(line.find("comm 00000000000000d2, proxy stream"), std::string::npos) << line;
    }
  }
  for (auto* c : {with_dead.get(), with_left.get(), whole.get()}) c->stream(0).running = false;
  for (auto& c : {with_dead, with_left, whole}) {
    e.remove_comm(c.get());
    Registry::instance().remove_comm(c.get());
  }
}

// A member that dies after the stall WARN: the stall is looked at again
// every health.stall_warn_s, silently while every member lives, and fails
// at the first look that finds the dead one.
TEST(HealthLink, AMemberThatDiesAfterTheStallWarningFailsTheStallAtTheNextLook) {
  auto loopback = SocketAddress::parse("127.0.0.1:1");
  ASSERT_TRUE(loopback);
  loopback->set_port(0);
  auto listener = Socket::listen(*loopback);
  ASSERT_TRUE(listener) << listener.error().message;
  ASSERT_TRUE(engine::set_nonblocking(listener->fd()));
  constexpr uint64_t kMine = 0x100, kSilent = 0x200, kDies = 0x300;
  Card mine;
  mine.service = true;
  mine.pid = static_cast<uint32_t>(getpid());
  mine.process = kMine;
  mine.endpoint = listener->local_address();
  mine.host = "here";
  // Both peers accept nothing: unresponsive, until one's port closes.
  auto silent_port = Socket::listen(*loopback);
  ASSERT_TRUE(silent_port) << silent_port.error().message;
  auto dies_port = Socket::listen(*loopback);
  ASSERT_TRUE(dies_port) << dies_port.error().message;
  std::vector<Card> cards{mine};
  for (auto [key, port] : {std::pair{kSilent, &*silent_port}, std::pair{kDies, &*dies_port}}) {
    Card c;
    c.service = true;
    c.pid = static_cast<uint32_t>(key >> 8);  // 2, 3
    c.process = key;
    c.endpoint = port->local_address();
    c.host = "there";
    cards.push_back(c);
  }
  ServiceSettings s;
  s.client_address.clear();
  s.keepalive_ms = 10000;
  s.query_timeout_ms = 300;
  s.stall_warn_ms = 1000;
  s.stall_fail_ms = 0;
  {
    std::lock_guard lock(g_gate.mu);
    g_gate.reset("");
  }
  log::set_warn_sink(gate_sink);
  engine::Engine e(s, std::move(*listener), Socket{}, mine);
  auto record = Registry::instance().add_comm(0xd4, 0, 3, {kMine, kSilent, kDies});
  e.add_comm(record, kSecret, cards);
  StreamProgress& sp = record->stream(0);
  sp.waiting_peer = 1;
  sp.waiting_known = true;  // as the scheduler publishes it
  sp.started = 1;
  sp.last_progress_ms = now_ms();
  sp.running = true;

  const auto warning = warned("rank 0 of comm 00000000000000d4");
  ASSERT_TRUE(warning) << "no stall WARN";
  EXPECT_FALSE(sp.has_verdict.load());
  const auto died = Clock::now();
  dies_port->close();
  const auto deadline = died + std::chrono::seconds(5);
  while (!sp.has_verdict.load(std::memory_order_acquire) && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  log::set_warn_sink(nullptr);
  ASSERT_TRUE(sp.has_verdict.load()) << "the stall did not fail after its member died";
  // At the next look: one stall_warn period after the WARN's probe, plus
  // the query bound.
  EXPECT_LE(Clock::now() - died,
            std::chrono::milliseconds(s.stall_warn_ms + 2 * s.query_timeout_ms + 1000));
  {
    std::lock_guard lock(sp.mu);
    EXPECT_NE(sp.verdict.text.find("; failing now, not after health.stall_fail_s: rank 2 (host "
                                   "there, pid 3) of this communicator is dead"),
              std::string::npos)
        << sp.verdict.text;
  }
  {
    std::lock_guard lock(g_gate.mu);
    int warnings = 0;
    for (const std::string& line : g_gate.lines)
      warnings += line.find("comm 00000000000000d4, proxy stream") != std::string::npos;
    EXPECT_EQ(warnings, 1) << "the looks after the WARN are silent";
  }
  sp.running = false;
  e.remove_comm(record.get());
  Registry::instance().remove_comm(record.get());
}

// The scheduler publishes what a stalled stream waits on at its first tick
// after a second without progress; with health.stall_warn_s = 1 the stall
// watchdog's clock reaches its bound at the same moment. The first WARN
// waits for the scheduler's word (up to a second past its bound), so it
// names the peer; a stream whose word never comes warns without one.
TEST(HealthLink, TheFirstStallWarningWaitsForTheSchedulersWordOnThePeer) {
  auto loopback = SocketAddress::parse("127.0.0.1:1");
  ASSERT_TRUE(loopback);
  loopback->set_port(0);
  auto listener = Socket::listen(*loopback);
  ASSERT_TRUE(listener) << listener.error().message;
  ASSERT_TRUE(engine::set_nonblocking(listener->fd()));
  constexpr uint64_t kMine = 0x100, kGhost = 0x900;
  Card mine;
  mine.service = true;
  mine.pid = static_cast<uint32_t>(getpid());
  mine.process = kMine;
  mine.endpoint = listener->local_address();
  mine.host = "here";
  ServiceSettings s;
  s.client_address.clear();
  s.keepalive_ms = 10000;
  s.stall_warn_ms = 1000;
  s.stall_fail_ms = 0;
  {
    std::lock_guard lock(g_gate.mu);
    g_gate.reset("");
  }
  log::set_warn_sink(gate_sink);
  engine::Engine e(s, std::move(*listener), Socket{}, mine);
  // The other rank has no health service: the probes ask no one.
  auto late = Registry::instance().add_comm(0xe1, 0, 2, {kMine, kGhost});
  e.add_comm(late, kSecret, {mine});
  auto never = Registry::instance().add_comm(0xe2, 0, 2, {kMine, kGhost});
  e.add_comm(never, kSecret, {mine});
  for (auto* c : {late.get(), never.get()}) {
    StreamProgress& sp = c->stream(0);
    sp.started = 1;
    sp.last_progress_ms = now_ms();
    sp.running = true;
  }
  // The scheduler of `late` speaks half a second after the bound.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  late->stream(0).waiting_peer = 1;
  late->stream(0).waiting_known = true;
  const auto named = warned("rank 0 of comm 00000000000000e1");
  const auto unnamed = warned("rank 0 of comm 00000000000000e2");
  log::set_warn_sink(nullptr);
  ASSERT_TRUE(named) << "no stall WARN for the stream whose peer came late";
  EXPECT_NE(named->find("(health.stall_warn_s): waiting on rank 1 "), std::string::npos) << *named;
  ASSERT_TRUE(unnamed) << "no stall WARN for the stream whose peer never came";
  EXPECT_NE(unnamed->find("(health.stall_warn_s): waiting on a peer the transport does not name"),
            std::string::npos)
      << *unnamed;
  for (auto* c : {late.get(), never.get()}) c->stream(0).running = false;
  for (auto& c : {late, never}) {
    e.remove_comm(c.get());
    Registry::instance().remove_comm(c.get());
  }
}

}  // namespace
}  // namespace nccom::health
