// The stall watchdog of a real health engine, its peers played with raw
// sockets: when a stall fails at its WARN (a member lost), when it waits for
// the scheduler's word on the peer.
#include "log/log.h"
#include "peer_test_util.h"

#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace nccom::health {
namespace {

using namespace peer_test;

constexpr uint64_t kSecret = 0x5ec12e7;
constexpr uint64_t kMine = 0x100;

// Settings of an engine whose streams warn after 1 s and never fail by
// time: only a lost member fails them. No keep-alive verdict within a test.
ServiceSettings stall_settings() {
  ServiceSettings s;
  s.client_address.clear();
  s.keepalive_ms = 10000;
  s.query_timeout_ms = 300;
  s.stall_warn_ms = 1000;
  s.stall_fail_ms = 0;
  return s;
}

// Catches the WARN lines from here on (nothing held).
void catch_warnings() {
  {
    std::lock_guard lock(g_gate.mu);
    g_gate.reset("");
  }
  log::set_warn_sink(gate_sink);
}

// Waits for a failure on stream 0 of `comm` (polled; the 30 s bound only
// ends a hang).
std::optional<std::string> await_verdict(CommRecord& comm) {
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (!verdict_of(comm) && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return verdict_of(comm);
}

// Parks the engine's thread at the next WARN line that has `text`.
void freeze_on(const std::string& text) {
  {
    std::lock_guard lock(g_gate.mu);
    g_gate.reset(text);
  }
  log::set_warn_sink(gate_sink);
}

// Waits until the engine's thread is parked (the bound only ends a hang).
bool frozen() {
  std::unique_lock lock(g_gate.mu);
  return g_gate.cv.wait_for(lock, std::chrono::seconds(30), [] { return g_gate.frozen; });
}

// Lets the parked thread go; later lines park nothing.
void thaw() {
  {
    std::lock_guard lock(g_gate.mu);
    g_gate.freeze_on.clear();
    g_gate.go = true;
  }
  g_gate.cv.notify_all();
}

// Stall probes that reached the process listening on `port` since the last
// call: every probe opens a query connection to each member, which waits in
// the backlog (nobody answers) and is counted here by its hello. Links are
// not probes. The connections taken stay open in `held`, as unanswered as
// they were in the backlog.
int probes_at(Socket& port, std::vector<Socket>& held) {
  int probes = 0;
  for (;;) {
    const int fd = ::accept4(port.fd(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) break;  // EAGAIN: the listener is non-blocking
    held.emplace_back(fd);
    const auto hello = next_frame_of(fd, FrameType::kHello);
    if (!hello) continue;
    const auto h = Hello::decode(hello->data(), hello->size());
    probes += h && h->purpose == Purpose::kQuery;
  }
  return probes;
}

// How many WARN lines name stream 0 of communicator `hash_text`.
int stall_warnings(const std::string& hash_text) {
  std::lock_guard lock(g_gate.mu);
  int n = 0;
  for (const std::string& line : g_gate.lines)
    n += line.find("comm " + hash_text + ", proxy stream") != std::string::npos;
  return n;
}

// A member that is dead or has freed its communicators takes no further
// part, so a stall in its communicator cannot end: the stall probe fails
// the stream at the WARN instead of waiting for health.stall_fail_s (never,
// here). Three communicators stall, each waiting on a live process that
// does not answer: one with a dead member (its port refuses), one with a
// member that said goodbye, and one with neither, which only warns.
TEST(HealthStall, AStallInACommunicatorWithALostMemberFailsAtTheWarning) {
  auto listener = engine_listener();
  ASSERT_TRUE(listener);
  // Ring order by key: the engine (0x100) links out to 0x200 (silent) and
  // 0x300 (dead: refused), and 0x400 (leaves) links in.
  constexpr uint64_t kSilent = 0x200, kDead = 0x300, kLeaves = 0x400;
  const Card mine =
      card_at(kMine, static_cast<uint32_t>(getpid()), listener->local_address(), "here");
  // The silent process accepts nothing: its connections wait in the
  // backlog and no query is answered. The dead one's port is closed.
  auto silent_port = engine_listener();
  auto leaves_port = engine_listener();
  auto dead_port = engine_listener();
  ASSERT_TRUE(silent_port && leaves_port && dead_port);
  const Card silent = card_at(kSilent, 2, silent_port->local_address(), "there");
  const Card leaves = card_at(kLeaves, 4, leaves_port->local_address(), "there");
  const Card dead = card_at(kDead, 3, dead_port->local_address(), "there");
  dead_port->close();

  catch_warnings();
  engine::Engine e(stall_settings(), std::move(*listener), Socket{}, mine);
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
  for (auto* c : {with_dead.get(), with_left.get(), whole.get()}) stall(*c, 1);
  // The whole communicator's stall is a WARN; once it is logged, the
  // probes of all three have had their answers (they start together).
  const auto warning = warned("rank 0 of comm 00000000000000d3");
  log::set_warn_sink(nullptr);
  ASSERT_TRUE(warning) << "no stall WARN for the communicator without a lost member";
  EXPECT_NE(warning->find("(health.stall_warn_s): waiting on rank 1 (host there, pid 2): "
                          "unresponsive"),
            std::string::npos)
      << *warning;
  EXPECT_FALSE(verdict_of(*whole)) << *verdict_of(*whole);
  const auto failed_dead = await_verdict(*with_dead);
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
  const auto failed_left = await_verdict(*with_left);
  ASSERT_TRUE(failed_left) << "the stall with a member that left did not fail";
  EXPECT_NE(failed_left->find("; failing now, not after health.stall_fail_s: rank 2 (host there, "
                              "pid 4) of this communicator has freed its communicators"),
            std::string::npos)
      << *failed_left;
  EXPECT_EQ(stall_warnings("00000000000000d1"), 0);
  EXPECT_EQ(stall_warnings("00000000000000d2"), 0);
  for (auto& c : {with_dead, with_left, whole}) {
    c->stream(0).running = false;
    e.remove_comm(c.get());
    Registry::instance().remove_comm(c.get());
  }
}

// A member that dies after the stall WARN: the stall is looked at again
// every health.stall_warn_s, silently while every member lives, and fails
// at the first look that finds the dead one. The looks are counted, as the
// probes that reach the silent member: the engine's thread is parked at the
// WARN while the member dies, so the next look is the first after the death.
TEST(HealthStall, AMemberThatDiesAfterTheStallWarningFailsTheStallAtTheNextLook) {
  auto listener = engine_listener();
  ASSERT_TRUE(listener);
  constexpr uint64_t kSilent = 0x200, kDies = 0x300;
  const Card mine =
      card_at(kMine, static_cast<uint32_t>(getpid()), listener->local_address(), "here");
  // Both peers accept nothing: unresponsive, until one's port closes.
  auto silent_port = engine_listener();
  auto dies_port = engine_listener();
  ASSERT_TRUE(silent_port && dies_port);
  std::vector<Socket> held;
  const ServiceSettings s = stall_settings();
  freeze_on("rank 0 of comm 00000000000000d4");
  engine::Engine e(s, std::move(*listener), Socket{}, mine);
  auto record = Registry::instance().add_comm(0xd4, 0, 3, {kMine, kSilent, kDies});
  e.add_comm(record, kSecret,
             {mine, card_at(kSilent, 2, silent_port->local_address(), "there"),
              card_at(kDies, 3, dies_port->local_address(), "there")});
  stall(*record, 1);

  const bool parked = frozen();
  if (!parked) log::set_warn_sink(nullptr);
  ASSERT_TRUE(parked) << "no stall WARN";
  EXPECT_FALSE(verdict_of(*record));
  EXPECT_EQ(probes_at(*silent_port, held), 1) << "the WARN is the first look";
  dies_port->close();
  thaw();
  const auto failed = await_verdict(*record);
  log::set_warn_sink(nullptr);
  ASSERT_TRUE(failed) << "the stall did not fail after its member died";
  EXPECT_EQ(probes_at(*silent_port, held), 1)
      << "the stall failed at the first look after the death";
  EXPECT_NE(failed->find("; failing now, not after health.stall_fail_s: rank 2 (host there, pid "
                         "3) of this communicator is dead"),
            std::string::npos)
      << *failed;
  EXPECT_EQ(stall_warnings("00000000000000d4"), 1) << "the looks after the WARN are silent";
  record->stream(0).running = false;
  e.remove_comm(record.get());
  Registry::instance().remove_comm(record.get());
}

// The scheduler publishes what a stalled stream waits on at its first tick
// after a second without progress; with health.stall_warn_s = 1 the stall
// watchdog's clock reaches its bound at the same moment. The first WARN
// waits for the scheduler's word (up to a second past its bound), so it
// names the peer; a stream whose word never comes warns without one.
//
// A third stream, stalled at the same moment with its peer known, paces
// the test: its WARN comes at the watchdog's first look past the bound, a
// look that also found the other two past it without a word. The engine's
// thread is parked at that WARN while the word of `late` is published, so
// the word comes after the bound and before the next look, whatever the
// scheduler does with either thread.
TEST(HealthStall, TheFirstStallWarningWaitsForTheSchedulersWordOnThePeer) {
  auto listener = engine_listener();
  ASSERT_TRUE(listener);
  constexpr uint64_t kGhost = 0x900;
  const Card mine =
      card_at(kMine, static_cast<uint32_t>(getpid()), listener->local_address(), "here");
  freeze_on("rank 0 of comm 00000000000000e3");
  engine::Engine e(stall_settings(), std::move(*listener), Socket{}, mine);
  // The other rank has no health service: the probes ask no one.
  auto late = Registry::instance().add_comm(0xe1, 0, 2, {kMine, kGhost});
  e.add_comm(late, kSecret, {mine});
  auto never = Registry::instance().add_comm(0xe2, 0, 2, {kMine, kGhost});
  e.add_comm(never, kSecret, {mine});
  auto pacer = Registry::instance().add_comm(0xe3, 0, 2, {kMine, kGhost});
  e.add_comm(pacer, kSecret, {mine});
  for (auto* c : {late.get(), never.get()}) {
    stall(*c, -1);
    c->stream(0).waiting_known = false;  // the scheduler has not spoken yet
  }
  stall(*pacer, 1);
  // One moment of last progress for all three: the watchdog reaches the
  // bound for all three at the same look.
  const uint64_t since = now_ms();
  for (auto* c : {late.get(), never.get(), pacer.get()}) c->stream(0).last_progress_ms = since;

  const bool parked = frozen();
  if (!parked) log::set_warn_sink(nullptr);
  ASSERT_TRUE(parked) << "no stall WARN for the stream whose peer was known";
  EXPECT_EQ(stall_warnings("00000000000000e1"), 0) << "the WARN did not wait for the word";
  EXPECT_EQ(stall_warnings("00000000000000e2"), 0) << "the WARN did not wait for the word";
  late->stream(0).waiting_peer = 1;
  late->stream(0).waiting_known = true;
  thaw();
  const auto named = warned("rank 0 of comm 00000000000000e1");
  const auto unnamed = warned("rank 0 of comm 00000000000000e2");
  log::set_warn_sink(nullptr);
  ASSERT_TRUE(named) << "no stall WARN for the stream whose peer came late";
  EXPECT_NE(named->find("(health.stall_warn_s): waiting on rank 1 "), std::string::npos) << *named;
  ASSERT_TRUE(unnamed) << "no stall WARN for the stream whose peer never came";
  EXPECT_NE(unnamed->find("(health.stall_warn_s): waiting on a peer the transport does not name"),
            std::string::npos)
      << *unnamed;
  for (auto& c : {late, never, pacer}) {
    c->stream(0).running = false;
    e.remove_comm(c.get());
    Registry::instance().remove_comm(c.get());
  }
}

}  // namespace
}  // namespace nccom::health
