// Faults during and after the bootstrap: a missing root, missing, dying,
// duplicate or mismatched ranks, strangers, truncated messages, a peer that
// dies. Every fault must end in a clear error well within the configured
// timeout, and leave no fd, thread or root behind.
#include "comm_test_util.h"
#include "core/runtime.h"
#include "fault_util.h"

#include <fcntl.h>

#include <array>
#include <cstring>

extern "C" const char nccom_build_git_hash[];

namespace {

using namespace nccom_fault;
using nccom::bootstrap::ExtInfo;
using nccom::bootstrap::PeerMesh;
using nccom::bootstrap::UniqueId;
using nccom::comm::BootstrapSettings;

// Bounds for "failed by error, not by timeout" and for "at the timeout".
// A scenario that must end by error has timeouts of kHandshake: ended by
// one, it would take at least that long, so ending sooner is the proof,
// however loaded the machine. One that ends at a timeout of kShort takes at
// least that, and at most kHang more: only a timeout that never fires takes
// longer, never a slow scheduler.
constexpr auto kHandshake = 30000ms;  // timeouts of scenarios that must end by error
constexpr auto kShort = 1000ms;       // timeouts of scenarios that end at a timeout
constexpr auto kHang = 10000ms;       // how late a timeout may be seen; later is a hang

BootstrapSettings settings(std::chrono::milliseconds handshake, std::chrono::milliseconds socket,
                           const std::string& protocol = "flat") {
  auto s = nccom_test::loopback_settings(protocol, handshake);
  s.socket_timeout = socket;
  return s;
}

RankSpec spec(int rank, int nranks, const UniqueId& id, const BootstrapSettings& s,
              bool global = false) {
  RankSpec r;
  r.rank = rank;
  r.nranks = nranks;
  r.id = id.encode();
  r.global = global;
  r.settings = s;
  return r;
}

long long ms_since(Clock::time_point begin) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - begin).count();
}

ExtInfo ext_info(int rank, int nranks) {
  ExtInfo info;
  info.rank = rank;
  info.nranks = nranks;
  info.listen_address = loopback(9);
  return info;
}

std::string hex(const std::array<uint8_t, nccom::bootstrap::kBuildTagBytes>& tag) {
  std::string out;
  char digits[3];
  for (uint8_t b : tag) {
    std::snprintf(digits, sizeof digits, "%02x", b);
    out += digits;
  }
  return out;
}

// The tag a global rank of this build sends, built as the original's
// getNcclNrtGitHash does: libnccom's git hash, then libnrt's.
std::array<uint8_t, nccom::bootstrap::kBuildTagBytes> real_build_tag() {
  std::array<uint8_t, nccom::bootstrap::kBuildTagBytes> tag{};
  std::strncpy(reinterpret_cast<char*>(tag.data()), nccom_build_git_hash, 8);
  nrt_version_t version{};
  if (nccom::runtime::api().nrt_get_version(&version, sizeof version) == NRT_SUCCESS) {
    std::memcpy(tag.data() + 8, version.git_hash, 8);
  }
  return tag;
}

class CommFaults : public ::testing::Test {
 protected:
  // One good bring-up first, so that one-time state (the logger, the
  // runtime, the resolver) is not mistaken for a leak.
  static void SetUpTestSuite() {
    static std::once_flag once;
    std::call_once(once, [] {
      for (bool global : {false, true}) {
        auto ranks = nccom_test::bring_up(2, 1, settings(kHandshake, kHandshake), global);
        for (const auto& r : ranks) ASSERT_TRUE(r.status) << r.status.error().message;
      }
      ASSERT_TRUE(eventually([] { return nccom::comm::reap_roots() == 0; }, kHandshake));
    });
  }

  void SetUp() override {
    fds_ = open_fds();
    threads_ = live_threads();
  }

  // A failed handshake ends its root by error or at the root's deadline
  // (at most kHandshake in these tests); then nothing may be left. A root
  // that failed its communicator and still answers late ranks is ended
  // first, as when libnccom is unloaded.
  void TearDown() override {
    nccom::comm::stop_decided_roots(0);
    EXPECT_TRUE(eventually([] { return nccom::comm::reap_roots() == 0; }, kHandshake + kHang))
        << "a bootstrap root is still running";
    // A joined thread leaves /proc/self/task a moment after join() returns.
    EXPECT_TRUE(eventually([&] { return live_threads() == threads_; }, kHang))
        << "threads before " << threads_ << ", after " << live_threads();
    // The health engine closes its link to a peer that died when it reads
    // the end of that link, on its own thread, possibly after the test's
    // last call returned: a leak is a descriptor that never closes.
    EXPECT_TRUE(eventually([&] { return open_fds() == fds_; }, kHang))
        << "file descriptors leaked: before " << fds_ << ", after " << open_fds();
  }

  int fds_ = 0;
  int threads_ = 0;
};

// 1. Nobody listens at the id's root address.
TEST_F(CommFaults, RootNeverStartsEveryRankTimesOutNamingTheRoot) {
  Socket hold = reserved_port();
  ASSERT_TRUE(hold.valid());
  const UniqueId id = id_at(hold.local_address(), 0x5eed);
  const auto s = settings(kShort, kShort);
  RankThreads ranks;
  for (int r = 0; r < 3; ++r) ranks.start(spec(r, 3, id, s));
  for (const auto& r : ranks.join()) {
    ASSERT_FALSE(r.status) << "rank " << r.rank;
    EXPECT_EQ(r.status.error().status, NRT_TIMEOUT) << r.message();
    EXPECT_TRUE(has(r.message(), {"no root at " + id.root.to_string(),
                                  "connect to " + id.root.to_string(), "is rank 0 running"}));
    EXPECT_GE(r.took, kShort - 100ms);
    EXPECT_LT(r.took, kShort + kHang);
  }
}

// 2. Rank 3 of 4 never arrives: the root fails the others at its deadline.
TEST_F(CommFaults, MissingRankFailsTheOthersAtTheRootDeadlineNamingIt) {
  const auto begin = Clock::now();
  auto id = nccom::comm::get_unique_id(nullptr, 4, false, settings(kShort, kShort));
  ASSERT_TRUE(id) << id.error().message;
  RankThreads ranks;
  for (int r = 0; r < 3; ++r) ranks.start(spec(r, 4, *id, settings(kHandshake, kHandshake)));
  const auto results = ranks.join();
  const auto elapsed = ms_since(begin);
  for (const auto& r : results) {
    ASSERT_FALSE(r.status) << "rank " << r.rank;
    EXPECT_EQ(r.status.error().status, NRT_FAILURE);
    EXPECT_TRUE(has(r.message(), {"1 of 4 ranks (3) did not check in", id->root.to_string()}));
  }
  EXPECT_GE(elapsed, kShort.count() - 100);
  EXPECT_LT(elapsed, (kShort + kHang).count());
}

// 3. "Rank 3" authenticates, sends half its extInfo and dies.
TEST_F(CommFaults, RankDyingMidHandshakeFailsTheCommunicatorAtOnce) {
  const auto s = settings(kHandshake, kHandshake);
  auto id = nccom::comm::get_unique_id(nullptr, 4, false, s);
  ASSERT_TRUE(id) << id.error().message;
  RankThreads ranks;
  for (int r = 0; r < 3; ++r) ranks.start(spec(r, 4, *id, s));
  ASSERT_TRUE(root_has_checkins(id->root.port(), 3));

  RawClient dying(id->root);
  ASSERT_TRUE(dying.connected());
  const auto info = ext_info(3, 4).encode();
  ASSERT_TRUE(dying.hello(id->secret, 3, 4)
                  .header(MsgType::kInfoToRoot, info.size())
                  .bytes(info.data(), info.size() / 2)
                  .send());
  dying.close();

  for (const auto& r : ranks.join()) {
    ASSERT_FALSE(r.status) << "rank " << r.rank;
    EXPECT_TRUE(has(r.message(),
                    {"refused the communicator", "rank 3", "failed before the handshake finished",
                     "broke in the middle of a message"}));
    EXPECT_LT(r.took, kHandshake);
  }
}

// 3b. "Rank 3" authenticates and hangs up between messages.
TEST_F(CommFaults, RankHangingUpAfterItsHelloFailsTheCommunicatorAtOnce) {
  const auto s = settings(kHandshake, kHandshake);
  auto id = nccom::comm::get_unique_id(nullptr, 4, false, s);
  ASSERT_TRUE(id) << id.error().message;
  RankThreads ranks;
  for (int r = 0; r < 3; ++r) ranks.start(spec(r, 4, *id, s));
  ASSERT_TRUE(root_has_checkins(id->root.port(), 3));

  RawClient dying(id->root);
  ASSERT_TRUE(dying.connected());
  ASSERT_TRUE(dying.hello(id->secret, 3, 4).send());
  dying.close();

  for (const auto& r : ranks.join()) {
    ASSERT_FALSE(r.status) << "rank " << r.rank;
    EXPECT_TRUE(has(r.message(), {"rank 3", "hung up before the handshake finished"}));
    EXPECT_LT(r.took, kHandshake);
  }
}

// 4. Random bytes at the root and at a rank: refused, logged, harmless.
TEST_F(CommFaults, GarbageIsRefusedAndLoggedAndTheCommunicatorWorks) {
  const auto s = settings(kHandshake, kHandshake);
  auto id = nccom::comm::get_unique_id(nullptr, 3, false, s);
  ASSERT_TRUE(id) << id.error().message;
  WarnCapture warns;
  const auto noise = garbage(64, 7);
  {
    RawClient stranger(id->root);
    ASSERT_TRUE(stranger.connected());
    ASSERT_TRUE(stranger.bytes(noise.data(), noise.size()).send());
    const std::string from = stranger.local();
    stranger.close();
    ASSERT_TRUE(warns.wait_for({"refused a connection from " + from, "wrong magic"}, kHandshake));
  }
  auto ranks = join_meshes(*id, 3, s);
  for (const auto& r : ranks) ASSERT_TRUE(r.status) << r.status.error().message;

  PeerMesh& one = *ranks[1].mesh;
  RawClient stranger(one.addresses()[1]);
  ASSERT_TRUE(stranger.connected());
  ASSERT_TRUE(stranger.bytes(noise.data(), noise.size()).send());
  const std::string from = stranger.local();
  stranger.close();
  // Rank 1 meets the stranger while it waits for rank 0.
  uint64_t got = 0;
  nccom::Status received;
  std::thread waiter([&] { received = one.recv(0, MsgType::kUser, &got, sizeof got); });
  EXPECT_TRUE(
      warns.wait_for({"rank 1 refused a connection from " + from, "wrong magic"}, kHandshake));
  const uint64_t sent = 0x600dcafe;
  EXPECT_TRUE(ranks[0].mesh->send(1, MsgType::kUser, &sent, sizeof sent));
  waiter.join();
  ASSERT_TRUE(received) << received.error().message;
  EXPECT_EQ(got, sent);
  EXPECT_EQ(one.refused_connections(), 1);
  EXPECT_EQ(ranks[0].mesh->refused_connections(), 0);
  EXPECT_EQ(gather_exact(meshes_of(ranks)), "");
}

// 5. A well-formed client with the wrong secret, at the root and at a rank.
TEST_F(CommFaults, WrongSecretIsRefusedAndTheCommunicatorIsUnaffected) {
  const auto s = settings(kHandshake, kHandshake);
  auto id = nccom::comm::get_unique_id(nullptr, 3, false, s);
  ASSERT_TRUE(id) << id.error().message;
  WarnCapture warns;
  {
    // Claims rank 0: were it believed, the real rank 0 would be a duplicate.
    RawClient impostor(id->root);
    ASSERT_TRUE(impostor.connected());
    const auto info = ext_info(0, 3).encode();
    ASSERT_TRUE(impostor.hello(id->secret ^ 1, 0, 3)
                    .header(MsgType::kInfoToRoot, info.size())
                    .bytes(info.data(), info.size())
                    .send());
    ASSERT_TRUE(warns.wait_for({"refused a connection from " + impostor.local(), "wrong secret"},
                               kHandshake));
  }
  auto ranks = join_meshes(*id, 3, s);
  for (const auto& r : ranks) ASSERT_TRUE(r.status) << r.status.error().message;

  PeerMesh& one = *ranks[1].mesh;
  RawClient impostor(one.addresses()[1]);
  ASSERT_TRUE(impostor.connected());
  const uint64_t evil = 0xe71e71e7;
  ASSERT_TRUE(impostor.hello(id->secret ^ 1, 0, 3)
                  .header(MsgType::kUser, sizeof evil)
                  .bytes(&evil, sizeof evil)
                  .send());
  uint64_t got = 0;
  nccom::Status received;
  std::thread waiter([&] { received = one.recv(0, MsgType::kUser, &got, sizeof got); });
  EXPECT_TRUE(warns.wait_for(
      {"rank 1 refused a connection from " + impostor.local(), "wrong secret"}, kHandshake));
  const uint64_t sent = 0x600dcafe;
  EXPECT_TRUE(ranks[0].mesh->send(1, MsgType::kUser, &sent, sizeof sent));
  waiter.join();
  ASSERT_TRUE(received) << received.error().message;
  EXPECT_EQ(got, sent);
  EXPECT_EQ(one.refused_connections(), 1);
  EXPECT_EQ(gather_exact(meshes_of(ranks)), "");
}

// 6. The last rank runs another build.
TEST_F(CommFaults, OtherBuildTagFailsEveryRankNamingBothTags) {
  const auto real = real_build_tag();
  ASSERT_NE(hex(real), std::string(32, '0')) << "this build has no tag to compare";
  std::array<uint8_t, nccom::bootstrap::kBuildTagBytes> other{};
  for (std::size_t i = 0; i < other.size(); ++i) other[i] = static_cast<uint8_t>(0xa0 + i);
  ASSERT_NE(other, real);

  const auto s = settings(kHandshake, kHandshake);
  auto id = nccom::comm::get_unique_id(nullptr, 3, true, s);
  ASSERT_TRUE(id) << id.error().message;
  RankThreads ranks;
  for (int r = 0; r < 2; ++r) ranks.start(spec(r, 3, *id, s, /*global=*/true));
  ASSERT_TRUE(root_has_checkins(id->root.port(), 2));

  RawClient foreign(id->root);
  ASSERT_TRUE(foreign.connected());
  ExtInfo info = ext_info(2, 3);
  info.build_tag = other;
  const auto bytes = info.encode();
  ASSERT_TRUE(foreign.hello(id->secret, 2, 3)
                  .header(MsgType::kInfoToRoot, bytes.size())
                  .bytes(bytes.data(), bytes.size())
                  .send());
  const std::vector<std::string> expected{"runs build " + hex(other), "runs " + hex(real),
                                          "all ranks must run the same libnccom and libnrt builds"};
  auto payload = foreign.reply(MsgType::kInfoFromRoot, kHandshake);
  ASSERT_TRUE(payload) << payload.error().message;
  auto reply = nccom::bootstrap::RootReply::decode(payload->data(), payload->size());
  ASSERT_TRUE(reply) << reply.error().message;
  EXPECT_NE(reply->status, 0u);
  EXPECT_TRUE(has(reply->error, expected));
  for (const auto& r : ranks.join()) {
    ASSERT_FALSE(r.status) << "rank " << r.rank;
    EXPECT_TRUE(has(r.message(), expected));
    EXPECT_LT(r.took, kHandshake);
  }
}

// 7. Two threads both claim rank 1 (flat; then through one host's leader,
// whose connection carries both check-ins).
class CommFaultsDuplicate : public CommFaults, public ::testing::WithParamInterface<const char*> {};

TEST_P(CommFaultsDuplicate, DuplicateRankFailsEveryone) {
  auto s = settings(kHandshake, kHandshake);
  s.protocol = GetParam();
  auto id = nccom::comm::get_unique_id(nullptr, 4, false, s);
  ASSERT_TRUE(id) << id.error().message;
  RankThreads ranks;
  for (int r = 0; r < 3; ++r) ranks.start(spec(r, 4, *id, s));
  // The second rank 1 comes once the others are in: a rank that reached
  // neither the root nor its leader before the verdict finds nobody to tell
  // it (it fails 'no root at ...' after its connect timeout).
  if (std::string(GetParam()) == "flat") {
    ASSERT_TRUE(root_has_checkins(id->root.port(), 3));
  } else {
    ASSERT_TRUE(leader_has_forwarded(id->root.port(), 3));
  }
  ranks.start(spec(1, 4, *id, s));
  const auto results = ranks.join();
  ASSERT_EQ(results.size(), 4u);
  for (const auto& r : results) {
    ASSERT_FALSE(r.status) << "rank " << r.rank;
    EXPECT_TRUE(has(r.message(), {"rank 1 checked in twice"}));
    // Each check-in named by the listener of the process that sent it.
    const std::string& m = r.message();
    const auto first = m.find("listening at ");
    const auto second = m.find("listening at ", first + 1);
    ASSERT_NE(second, std::string::npos) << m;
    const auto address = [&](std::size_t at) {
      const std::size_t begin = at + std::strlen("listening at ");
      return m.substr(begin, m.find_first_of(",)", begin) - begin);
    };
    EXPECT_NE(address(first), address(second)) << m;
    EXPECT_LT(r.took, kHandshake);
  }
}

INSTANTIATE_TEST_SUITE_P(Protocols, CommFaultsDuplicate, ::testing::Values("flat", "hierarchical"));

// 8. Ranks outside [0, nranks) are refused before any socket is opened.
TEST_F(CommFaults, InvalidRankIsRefusedWithoutTouchingTheNetwork) {
  auto listener = Socket::listen(loopback(0));
  ASSERT_TRUE(listener);
  const UniqueId id = id_at(listener->local_address(), 0x5eed);
  const ncclUniqueId bytes = id.encode();
  const auto s = settings(kHandshake, kHandshake);
  enc_neuron_device_info_t dev{};
  for (auto [rank, nranks] : {std::pair{5, 4}, std::pair{4, 4}, std::pair{-1, 4}}) {
    nccom::comm::InitRequest request;
    request.id = &bytes;
    request.rank = rank;
    request.nranks = nranks;
    request.device = &dev;
    const auto begin = Clock::now();
    auto created = nccom::comm::Communicator::create(request, s);
    ASSERT_FALSE(created);
    EXPECT_EQ(created.error().status, NRT_INVALID);
    EXPECT_EQ(created.error().message,
              "Invalid rank requested : " + std::to_string(rank) + "/" + std::to_string(nranks));
    EXPECT_LT(ms_since(begin), kHandshake.count()) << "the refusal waited for a timeout";
  }
  auto nobody = listener->accept(Clock::now());
  EXPECT_FALSE(nobody) << "a refused rank connected to the root";
}

// 9a. An authenticated check-in cut short: the root reports it to the others.
TEST_F(CommFaults, TruncatedCheckInIsReportedByTheRoot) {
  const auto s = settings(kHandshake, kHandshake);
  auto id = nccom::comm::get_unique_id(nullptr, 2, false, s);
  ASSERT_TRUE(id) << id.error().message;
  WarnCapture warns;
  RankThreads ranks;
  ranks.start(spec(0, 2, *id, s));
  ASSERT_TRUE(root_has_checkins(id->root.port(), 1));

  RawClient cut(id->root);
  ASSERT_TRUE(cut.connected());
  const auto info = ext_info(1, 2).encode();
  ASSERT_TRUE(cut.hello(id->secret, 1, 2)
                  .header(MsgType::kInfoToRoot, nccom::bootstrap::kExtInfoBytes)
                  .bytes(info.data(), 10)
                  .send());
  cut.close();

  const auto results = ranks.join();
  ASSERT_FALSE(results[0].status);
  EXPECT_TRUE(has(results[0].message(), {"rank 1", "broke in the middle of a message"}));
  EXPECT_LT(results[0].took, kHandshake);
  EXPECT_TRUE(
      warns.wait_for({"bootstrap root", "rank 1", "broke in the middle of a message"}, kHandshake));
}

// 9b. After bring-up, a member (right secret) cut off mid-message: a receive
// waiting for that rank fails at once, not at the timeout.
TEST_F(CommFaults, TruncatedPeerMessageFailsTheWaitingRecvAtOnce) {
  const auto s = settings(kHandshake, kHandshake);
  auto id = nccom::comm::get_unique_id(nullptr, 3, false, s);
  ASSERT_TRUE(id) << id.error().message;
  auto ranks = join_meshes(*id, 3, s);
  for (const auto& r : ranks) ASSERT_TRUE(r.status) << r.status.error().message;

  PeerMesh& one = *ranks[1].mesh;
  RawClient cut(one.addresses()[1]);
  ASSERT_TRUE(cut.connected());
  const auto payload = garbage(56, 9);
  ASSERT_TRUE(cut.hello(id->secret, 2, 3)
                  .header(MsgType::kUser, payload.size())
                  .bytes(payload.data(), 10)
                  .send());
  cut.close();

  uint8_t buffer[56];
  const auto begin = Clock::now();
  auto received = one.recv(2, MsgType::kUser, buffer, sizeof buffer);
  const auto elapsed = ms_since(begin);
  ASSERT_FALSE(received);
  EXPECT_EQ(received.error().status, NRT_FAILURE);
  EXPECT_TRUE(has(received.error().message, {"rank 2", "broke in the middle of a message"}));
  EXPECT_LT(elapsed, kHandshake.count()) << "the receive waited for its timeout";
}

// 10. One rank was told the communicator has 5 ranks.
TEST_F(CommFaults, RankCountMismatchFailsEveryRank) {
  const auto s = settings(kHandshake, kHandshake);
  auto id = nccom::comm::get_unique_id(nullptr, 4, false, s);
  ASSERT_TRUE(id) << id.error().message;
  RankThreads ranks;
  for (int r : {0, 1, 3}) ranks.start(spec(r, 4, *id, s));
  ASSERT_TRUE(root_has_checkins(id->root.port(), 3));
  ranks.start(spec(2, 5, *id, s));
  const auto results = ranks.join();
  for (const auto& r : results) {
    ASSERT_FALSE(r.status) << "rank " << r.rank;
    EXPECT_TRUE(has(r.message(), {"rank 2", "was started for 5 ranks, the root for 4",
                                  "every rank must be given the same rank count"}));
    EXPECT_LT(r.took, kHandshake);
  }
}

// 11. A host:port root, and one rank configured for the other protocol.
TEST_F(CommFaults, MixedProtocolsFailEveryRank) {
  // Held for the whole test: released early, another process could take it
  // before the root binds it.
  Socket held = reserved_port(/*for_root=*/true);
  ASSERT_TRUE(held.valid());
  const uint16_t port = held.local_address().port();
  const std::string root = "127.0.0.1:" + std::to_string(port);
  RankThreads ranks;
  auto start = [&](int rank, const std::string& protocol) {
    RankSpec rs;
    rs.rank = rank;
    rs.nranks = 4;
    rs.root_comm_id = root;  // rank 0 starts the root there
    rs.settings = settings(kHandshake, kHandshake, protocol);
    ranks.start(rs);
  };
  for (int r = 0; r < 3; ++r) start(r, "flat");
  ASSERT_TRUE(root_has_checkins(port, 3));
  start(3, "hierarchical");
  for (const auto& r : ranks.join()) {
    ASSERT_FALSE(r.status) << "rank " << r.rank;
    EXPECT_TRUE(
        has(r.message(), {"rank 3", "uses the hierarchical bootstrap protocol, others the flat one",
                          "set bootstrap.protocol alike on every rank"}));
    EXPECT_LT(r.took, kHandshake);
  }
}

// 11b. A host:port root whose port another program listens on: rank 0
// fails at once, naming the address and what to do.
TEST_F(CommFaults, ARootPortAnotherProgramHoldsFailsRankZeroAtOnceSayingWhatToDo) {
  auto stranger = Socket::listen(loopback(0));
  ASSERT_TRUE(stranger.ok()) << stranger.error().message;
  const std::string root = stranger->local_address().to_string();
  RankSpec rs;
  rs.rank = 0;
  rs.nranks = 2;
  rs.root_comm_id = root;
  rs.settings = settings(kHandshake, kHandshake);
  RankThreads ranks;
  ranks.start(rs);
  for (const auto& r : ranks.join()) {
    ASSERT_FALSE(r.status);
    EXPECT_TRUE(
        has(r.message(), {"bootstrap root: cannot listen on " + root, std::strerror(EADDRINUSE),
                          "another program or job holds the port", "below the ephemeral range",
                          "NEURON_RT_ROOT_COMM_ID"}))
        << r.message();
    EXPECT_LT(r.took, kHandshake);
  }
}

// 12. A peer's communicator is destroyed after bring-up.
TEST_F(CommFaults, DeadPeerFailsReceivesWithinTheSocketTimeout) {
  auto ranks = nccom_test::bring_up(3, 1, settings(kHandshake, kShort));
  for (const auto& r : ranks) ASSERT_TRUE(r.status) << r.status.error().message;
  ranks[2].comm.reset();

  std::vector<nccom::Status> received(2);
  std::vector<long long> took(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      const auto begin = Clock::now();
      uint64_t value = 0;
      received[r] = ranks[r].comm->recv(2, MsgType::kUser, &value, sizeof value);
      took[r] = ms_since(begin);
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < 2; ++r) {
    ASSERT_FALSE(received[r]) << "rank " << r;
    EXPECT_TRUE(has(received[r].error().message, {"from rank 2"}));
    EXPECT_LT(took[r], (kShort + kHang).count());
  }
}

// ---- The same in separate processes -------------------------------------------------

// The child is rank 1: it reads the id, brings its communicator up, reports
// the outcome (0 = up) and waits to be killed. Runs no threads of its own.
[[noreturn]] void child_rank(int id_fd, int report_fd, int nranks, const BootstrapSettings& s,
                             const std::string& expected_error) {
  ::alarm(20);  // never outlive a broken parent
  ncclUniqueId id{};
  if (!read_exact(id_fd, &id, sizeof id, 10000)) ::_exit(10);
  enc_neuron_device_info_t dev{};
  nccom::comm::InitRequest request;
  request.id = &id;
  request.rank = 1;
  request.nranks = nranks;
  request.device = &dev;
  auto created = nccom::comm::Communicator::create(request, s);
  uint8_t outcome = 0;
  if (expected_error.empty()) {
    outcome = created ? 0 : 1;
  } else {
    outcome = !created && created.error().message.find(expected_error) != std::string::npos ? 0 : 2;
  }
  if (::write(report_fd, &outcome, 1) != 1) ::_exit(11);
  uint8_t never = 0;
  (void)::read(id_fd, &never, 1);  // until killed, or the parent closes the pipe
  ::_exit(0);
}

// 12, multi-process: rank 1 is another process, killed after bring-up.
TEST_F(CommFaults, KilledPeerProcessFailsReceivesWithinTheSocketTimeout) {
  int id_pipe[2] = {-1, -1}, report_pipe[2] = {-1, -1};
  Child child;
  ASSERT_EQ(::pipe2(id_pipe, O_CLOEXEC), 0);
  child.fds = {id_pipe[0], id_pipe[1]};
  ASSERT_EQ(::pipe2(report_pipe, O_CLOEXEC), 0);
  child.fds.insert(child.fds.end(), {report_pipe[0], report_pipe[1]});
  const auto s = settings(kHandshake, kShort);
  child.pid = ::fork();  // first, while this process runs no other thread
  ASSERT_GE(child.pid, 0);
  if (child.pid == 0) child_rank(id_pipe[0], report_pipe[1], 2, s, "");

  auto id = nccom::comm::get_unique_id(nullptr, 2, false, s);
  ASSERT_TRUE(id) << id.error().message;
  const ncclUniqueId bytes = id->encode();
  ASSERT_EQ(::write(id_pipe[1], &bytes, sizeof bytes), static_cast<ssize_t>(sizeof bytes));
  RankThreads ranks;
  ranks.start(spec(0, 2, *id, s));
  auto results = ranks.join();
  ASSERT_TRUE(results[0].status) << results[0].message();
  uint8_t outcome = 0xff;
  ASSERT_TRUE(read_exact(report_pipe[0], &outcome, 1, kHang.count()));
  ASSERT_EQ(outcome, 0) << "the child rank did not come up";

  ::kill(child.pid, SIGKILL);
  const int status = child.wait();
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

  const auto begin = Clock::now();
  uint64_t value = 0;
  auto received = results[0].comm->recv(1, MsgType::kUser, &value, sizeof value);
  ASSERT_FALSE(received);
  EXPECT_TRUE(has(received.error().message, {"from rank 1"}));
  EXPECT_LT(ms_since(begin), (kShort + kHang).count());
}

// 2, multi-process: rank 0 here, rank 1 in a child, rank 2 never comes.
TEST_F(CommFaults, MissingRankFailsRanksInTwoProcesses) {
  int id_pipe[2] = {-1, -1}, report_pipe[2] = {-1, -1};
  Child child;
  ASSERT_EQ(::pipe2(id_pipe, O_CLOEXEC), 0);
  child.fds = {id_pipe[0], id_pipe[1]};
  ASSERT_EQ(::pipe2(report_pipe, O_CLOEXEC), 0);
  child.fds.insert(child.fds.end(), {report_pipe[0], report_pipe[1]});
  const auto s = settings(kShort, kShort);
  const std::string expected = "1 of 3 ranks (2) did not check in";
  child.pid = ::fork();
  ASSERT_GE(child.pid, 0);
  if (child.pid == 0) {
    child_rank(id_pipe[0], report_pipe[1], 3, settings(kHandshake, kHandshake), expected);
  }

  const auto begin = Clock::now();
  auto id = nccom::comm::get_unique_id(nullptr, 3, false, s);
  ASSERT_TRUE(id) << id.error().message;
  const ncclUniqueId bytes = id->encode();
  ASSERT_EQ(::write(id_pipe[1], &bytes, sizeof bytes), static_cast<ssize_t>(sizeof bytes));
  RankThreads ranks;
  ranks.start(spec(0, 3, *id, settings(kHandshake, kHandshake)));
  auto results = ranks.join();
  ASSERT_FALSE(results[0].status);
  EXPECT_TRUE(has(results[0].message(), {expected}));
  uint8_t outcome = 0xff;
  ASSERT_TRUE(read_exact(report_pipe[0], &outcome, 1, kHang.count()));
  EXPECT_EQ(outcome, 0) << "the child rank did not fail with \"" << expected << "\"";
  EXPECT_LT(ms_since(begin), (kShort + kHang).count());
}

}  // namespace
