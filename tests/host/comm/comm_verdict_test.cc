// Every rank learns why a bootstrap failed, over real loopback and Unix
// sockets: a host's leader relays its own failure to the host's other ranks,
// a leader that dies is named by them at once, and during communicator setup
// a wait is bounded by the handshake timeout and gives up as soon as another
// member has left.
#include "comm_test_util.h"
#include "fault_util.h"

#include <fcntl.h>
#include <sys/wait.h>

#include <thread>

namespace {

using namespace nccom_fault;
using nccom::bootstrap::JoinOptions;
using nccom::bootstrap::UniqueId;

constexpr auto kHandshake = 3000ms;
// How late a timeout may be seen on a loaded machine; later is a hang. A
// wait that must end "at once" is checked against the timeout it would
// otherwise have waited for: ended by it, it takes at least that long.
constexpr auto kHang = 10000ms;
// The socket timeout of three_meshes(), beyond anything a test waits.
constexpr auto kMeshSocketTimeout = 60000ms;

// Every root a test started has finished and been joined when it ends (a
// finished root stays joinable until reap_roots, which libnccom calls from
// its own entry points; these tests drive the layers below them). A root
// that failed its communicator would answer late ranks until its deadline:
// ended here, as when libnccom is unloaded.
class CommVerdicts : public testing::Test {
 protected:
  void TearDown() override {
    nccom::comm::stop_decided_roots(0);
    EXPECT_TRUE(eventually([] { return nccom::comm::reap_roots() == 0; }, kHandshake + kHang))
        << "a bootstrap root is still running";
  }
};

long long ms_since(Clock::time_point begin) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - begin).count();
}

JoinOptions hierarchical(const UniqueId& root_id, int rank, int nranks, uint64_t host_hash,
                         std::chrono::milliseconds handshake) {
  JoinOptions o;
  o.id = root_id;
  o.id.protocol = nccom::bootstrap::Protocol::kHierarchical;
  o.rank = rank;
  o.nranks = nranks;
  o.host_hash = host_hash;
  o.listen_on = loopback(0);
  o.socket_timeout = handshake;
  o.handshake_timeout = handshake;
  return o;
}

// A per-test host identity, so that no two tests (or runs) share a leader.
uint64_t fresh_host_hash() {
  return (static_cast<uint64_t>(::getpid()) << 32) ^
         static_cast<uint64_t>(Clock::now().time_since_epoch().count());
}

// Three ranks' bootstrap meshes whose socket timeout (60 s) is far beyond
// anything a test waits: a wait that ends did not end by it.
std::vector<MeshRank> three_meshes() {
  auto s = nccom_test::loopback_settings("flat", kHandshake);
  s.socket_timeout = kMeshSocketTimeout;
  auto id = nccom::comm::get_unique_id(nullptr, 3, false, s);
  if (!id) {
    std::vector<MeshRank> failed(1);
    failed[0].status = id.take_error();
    return failed;
  }
  return join_meshes(*id, 3, s);
}

// The root is unreachable: the host's leader fails, and its member hears the
// leader's reason from it instead of a closed connection.
TEST_F(CommVerdicts, AHostLeaderRelaysItsOwnFailureToItsMembers) {
  Socket hold = reserved_port();
  ASSERT_TRUE(hold.valid());
  const UniqueId id = id_at(hold.local_address(), 0x7e57);
  const uint64_t host = fresh_host_hash();
  std::vector<nccom::Status> status(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      auto joined = nccom::bootstrap::join(hierarchical(id, r + 1, 3, host, 1000ms));
      status[r] = joined ? nccom::Status() : nccom::Status(joined.take_error());
    });
  }
  for (auto& t : threads) t.join();
  int relayed = 0;
  for (const auto& s : status) {
    ASSERT_FALSE(s);
    EXPECT_TRUE(has(s.error().message, {"no root at " + id.root.to_string(), "is rank 0 running"}));
    relayed += s.error().message.find("this host's bootstrap leader failed") != std::string::npos;
  }
  EXPECT_EQ(relayed, 1) << "one rank leads, the other hears its failure: "
                        << status[0].error().message << "\n"
                        << status[1].error().message;
}

// The leader (another process) forwards its member's check-in and dies: the
// member says so at once, without waiting for any timeout.
TEST_F(CommVerdicts, AHostLeaderThatDiesIsNamedByItsMembersAtOnce) {
  auto root = Socket::listen(loopback(0));
  ASSERT_TRUE(root);
  const UniqueId id = id_at(root->local_address(), 0x1eade7);
  const uint64_t host = fresh_host_hash();
  int ready_pipe[2] = {-1, -1};
  ASSERT_EQ(::pipe2(ready_pipe, O_CLOEXEC), 0);
  Child leader;
  leader.fds = {ready_pipe[0], ready_pipe[1]};
  leader.pid = ::fork();
  ASSERT_GE(leader.pid, 0);
  if (leader.pid == 0) {
    ::alarm(20);
    (void)nccom::bootstrap::join(hierarchical(id, 0, 2, host, 10000ms));
    ::_exit(0);
  }
  // The test is the root: the leader's hello and both check-ins arrive here
  // (24 + 2 x (16 + 4 + 56) bytes) once the member below is in.
  auto from_leader = root->accept(Clock::now() + 5s);
  ASSERT_TRUE(from_leader) << from_leader.error().message;
  uint8_t first[24 + 16 + 60];
  ASSERT_TRUE(from_leader->recv_all(first, sizeof first, Clock::now() + 5s));

  nccom::Status member;
  long long took = -1;
  std::thread t([&] {
    const auto begin = Clock::now();
    auto joined = nccom::bootstrap::join(hierarchical(id, 1, 2, host, 10000ms));
    took = ms_since(begin);
    member = joined ? nccom::Status() : nccom::Status(joined.take_error());
  });
  uint8_t second[16 + 60];
  const bool forwarded =
      static_cast<bool>(from_leader->recv_all(second, sizeof second, Clock::now() + 5s));
  ::kill(leader.pid, SIGKILL);
  leader.wait();
  t.join();
  ASSERT_TRUE(forwarded) << "the leader did not forward the member's check-in";
  ASSERT_FALSE(member);
  EXPECT_TRUE(has(member.error().message,
                  {"bootstrap rank 1/2", "bootstrap leader", "hung up without a verdict"}));
  EXPECT_LT(took, 10000) << "the member waited for its handshake timeout";
}

// During setup a wait is bounded by the handshake timeout, not the (much
// longer) socket timeout; after setup the socket timeout applies again.
TEST_F(CommVerdicts, SetupWaitsAreBoundedByTheHandshakeTimeout) {
  auto id = nccom::comm::get_unique_id(nullptr, 2, false,
                                       nccom_test::loopback_settings("flat", kHandshake));
  ASSERT_TRUE(id) << id.error().message;
  auto s = nccom_test::loopback_settings("flat", kHandshake);
  s.socket_timeout = 60000ms;
  auto ranks = join_meshes(*id, 2, s);
  for (const auto& r : ranks) ASSERT_TRUE(r.status) << r.status.error().message;
  ranks[0].mesh->set_setup(true, 500ms);
  const auto begin = Clock::now();
  uint64_t value = 0;
  auto got = ranks[0].mesh->recv(1, MsgType::kTransportInit, &value, sizeof value);
  const auto took = ms_since(begin);
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().status, NRT_TIMEOUT);
  EXPECT_TRUE(has(got.error().message, {"from rank 1", "timed out after 500 ms"}));
  EXPECT_GE(took, 450);
  EXPECT_LT(took, (500ms + kHang).count()) << "bounded by the socket timeout (60 s) instead?";
}

// During setup, rank 0 waits for rank 1 while rank 2 leaves: the wait ends
// at once, naming rank 2. Outside setup the same departure does not end it.
TEST_F(CommVerdicts, ASetupWaitGivesUpWhenAnotherMemberLeaves) {
  auto ranks = three_meshes();
  for (const auto& r : ranks) ASSERT_TRUE(r.status) << r.status.error().message;
  // Rank 2 talks to rank 0 first, so that rank 0 holds a connection from it.
  const uint32_t hello = 2;
  ASSERT_TRUE(ranks[2].mesh->send(0, MsgType::kUser, &hello, sizeof hello));
  uint32_t got_hello = 0;
  ASSERT_TRUE(ranks[0].mesh->recv(2, MsgType::kUser, &got_hello, sizeof got_hello));
  ranks[0].mesh->set_setup(true, 60000ms);

  nccom::Status waited;
  long long took = -1;
  std::thread t([&] {
    const auto begin = Clock::now();
    uint64_t value = 0;
    waited = ranks[0].mesh->recv(1, MsgType::kTransportInit, &value, sizeof value);
    took = ms_since(begin);
  });
  ranks[2].mesh.reset();
  t.join();
  ASSERT_FALSE(waited);
  EXPECT_TRUE(has(waited.error().message, {"recv of 8 bytes (TRANSPORT_INIT) from rank 1 given up",
                                           "rank 2", "closed its connection"}));
  EXPECT_LT(took, 60000) << "the wait ended at its timeout, not when rank 2 left";

  // Outside setup, rank 1's message still arrives although rank 2 is gone.
  ranks[0].mesh->set_setup(false);
  const uint64_t sent = 0x5e7;
  ASSERT_TRUE(ranks[1].mesh->send(0, MsgType::kTransportInit, &sent, sizeof sent));
  uint64_t value = 0;
  auto late = ranks[0].mesh->recv(1, MsgType::kTransportInit, &value, sizeof value);
  ASSERT_TRUE(late) << late.error().message;
  EXPECT_EQ(value, sent);
}

// A member that completed its setup and leaves cleanly (GOODBYE, then
// close) is not a member that broke: rank 0's setup wait for rank 1 goes
// on and receives. Only a wait for something the departed rank never sent
// fails, at once, naming it as departed; a send to it too.
TEST_F(CommVerdicts, ASetupWaitOutlivesAMemberThatLeftCleanly) {
  auto ranks = three_meshes();
  for (const auto& r : ranks) ASSERT_TRUE(r.status) << r.status.error().message;
  const uint32_t hello = 2;
  ASSERT_TRUE(ranks[2].mesh->send(0, MsgType::kUser, &hello, sizeof hello));
  ranks[0].mesh->set_setup(true, 60000ms);
  ranks[2].mesh->leave(1000ms);
  ranks[2].mesh.reset();

  nccom::Status waited;
  uint64_t value = 0;
  std::thread t(
      [&] { waited = ranks[0].mesh->recv(1, MsgType::kTransportInit, &value, sizeof value); });
  // Rank 1 sends only after rank 0 has had the departure to read: it is
  // queued on rank 0's connection before the wait begins or while it runs.
  uint32_t got_hello = 0;
  const uint64_t sent = 0x5e7;
  ASSERT_TRUE(ranks[1].mesh->send(0, MsgType::kTransportInit, &sent, sizeof sent));
  t.join();
  ASSERT_TRUE(waited) << waited.error().message;
  EXPECT_EQ(value, sent);

  // What rank 2 sent before it left is still there...
  ASSERT_TRUE(ranks[0].mesh->recv(2, MsgType::kUser, &got_hello, sizeof got_hello));
  EXPECT_EQ(got_hello, hello);
  // ...and nothing more will come: the wait fails at once, naming it.
  const auto begin = Clock::now();
  auto never = ranks[0].mesh->recv(2, MsgType::kTransportInit, &value, sizeof value);
  ASSERT_FALSE(never);
  EXPECT_TRUE(
      has(never.error().message, {"recv of 8 bytes (TRANSPORT_INIT) from rank 2",
                                  "completed its setup and freed its communicator", "same calls"}))
      << never.error().message;
  EXPECT_LT(ms_since(begin), 60000) << "the wait ended at its timeout, not at once";
  auto to_gone = ranks[0].mesh->send(2, MsgType::kUser, &hello, sizeof hello);
  ASSERT_FALSE(to_gone);
  EXPECT_TRUE(has(to_gone.error().message, {"to rank 2", "freed its communicator"}))
      << to_gone.error().message;
}

// A member whose own setup failed tells the others why before its process
// goes: rank 0, waiting for it, fails with that reason (which names the rank
// that started the failure) instead of "rank 1 closed its connection".
TEST_F(CommVerdicts, ASetupWaitForAMemberThatGaveUpNamesItsReason) {
  auto ranks = three_meshes();
  for (const auto& r : ranks) ASSERT_TRUE(r.status) << r.status.error().message;
  const uint32_t hello = 1;
  ASSERT_TRUE(ranks[1].mesh->send(0, MsgType::kUser, &hello, sizeof hello));
  ranks[0].mesh->set_setup(true, 60000ms);
  ranks[1].mesh->give_up("recv from rank 2 failed: rank 2 (127.0.0.1:9) closed its connection",
                         1000ms);
  ranks[1].mesh.reset();

  const auto begin = Clock::now();
  uint64_t value = 0;
  auto waited = ranks[0].mesh->recv(1, MsgType::kTransportInit, &value, sizeof value);
  ASSERT_FALSE(waited);
  EXPECT_TRUE(has(waited.error().message,
                  {"(bootstrap recv of 8 bytes (TRANSPORT_INIT) from rank 1)", "gave up its setup",
                   "recv from rank 2 failed: rank 2 (127.0.0.1:9) closed its connection"}))
      << waited.error().message;
  EXPECT_LT(ms_since(begin), 60000) << "the wait ended at its timeout, not at once";
}

// A member's listener existed before it checked in: a refused connection to
// it means its process is gone, and a send to it fails at once.
TEST_F(CommVerdicts, ASendToAMemberThatIsGoneFailsAtOnce) {
  auto ranks = three_meshes();
  for (const auto& r : ranks) ASSERT_TRUE(r.status) << r.status.error().message;
  // Rank 0 has no connection to rank 2 yet (the handshake's ring all-gather
  // only sends to rank 1): the send has to connect.
  ranks[2].mesh.reset();
  const auto begin = Clock::now();
  const uint64_t value = 1;
  auto sent = ranks[0].mesh->send(2, MsgType::kUser, &value, sizeof value);
  ASSERT_FALSE(sent);
  EXPECT_TRUE(has(sent.error().message, {"cannot reach rank 2", "nothing listens there any more"}));
  EXPECT_LT(ms_since(begin), kMeshSocketTimeout.count()) << "the send retried until its timeout";
}

// The root's port is this rank's own listener (the kernel gave a rank that
// started before rank 0 the port rank 0 was to bind): the rank says so at
// once instead of waiting out the handshake for a check-in nobody reads.
TEST_F(CommVerdicts, ARootAddressThatIsTheRanksOwnListenerIsNamedAtOnce) {
  for (const auto protocol :
       {nccom::bootstrap::Protocol::kFlat, nccom::bootstrap::Protocol::kHierarchical}) {
    SCOPED_TRACE(protocol == nccom::bootstrap::Protocol::kFlat ? "flat" : "hierarchical");
    auto listener = Socket::listen(loopback(0));
    ASSERT_TRUE(listener);
    JoinOptions o =
        hierarchical(id_at(listener->local_address(), 0x5e1f), 1, 2, fresh_host_hash(), 10000ms);
    o.id.protocol = protocol;
    const auto begin = Clock::now();
    auto joined = protocol == nccom::bootstrap::Protocol::kFlat
                      ? nccom::bootstrap::join_flat(o, std::move(listener).value())
                      : nccom::bootstrap::join_hierarchical(o, std::move(listener).value());
    ASSERT_FALSE(joined);
    EXPECT_TRUE(has(joined.error().message,
                    {"the root address " + o.id.root.to_string(), "(bootstrap rank 1/2)",
                     "is this rank's own bootstrap listener", "net.ipv4.ip_local_port_range"}))
        << joined.error().message;
    EXPECT_LT(ms_since(begin), 10000) << "the rank waited out its handshake timeout";
  }
}

// The root accepts the leader's check-in and then says nothing (its process
// is stopped, or its host went away with the connection open): the leader
// gives up at the handshake timeout plus the root's grace, and its member
// hears the leader's reason from it.
TEST_F(CommVerdicts, ARootThatNeverAnswersIsNamedByTheLeaderAndItsMembers) {
  auto root = Socket::listen(loopback(0));
  ASSERT_TRUE(root);
  const UniqueId id = id_at(root->local_address(), 0x51e47);
  const uint64_t host = fresh_host_hash();
  std::vector<nccom::Status> status(2);
  std::vector<std::thread> threads;
  const auto begin = Clock::now();
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      auto joined = nccom::bootstrap::join(hierarchical(id, r + 1, 3, host, 500ms));
      status[r] = joined ? nccom::Status() : nccom::Status(joined.take_error());
    });
  }
  // The silent root: it takes the leader's connection and never reads it.
  auto from_leader = root->accept(Clock::now() + 5s);
  for (auto& t : threads) t.join();
  const long long took = ms_since(begin);
  ASSERT_TRUE(from_leader) << from_leader.error().message;
  int relayed = 0;
  for (const auto& s : status) {
    ASSERT_FALSE(s);
    EXPECT_TRUE(
        has(s.error().message, {"the root at " + id.root.to_string(),
                                "accepted the check-in but gave no verdict within 5500 ms",
                                "is rank 0's process stopped, its host unreachable, or another "
                                "program listening at that address?"}))
        << s.error().message;
    relayed += s.error().message.find("this host's bootstrap leader failed") != std::string::npos;
  }
  EXPECT_EQ(relayed, 1) << status[0].error().message << "\n" << status[1].error().message;
  EXPECT_GE(took, 5500);
  EXPECT_LT(took, 5500 + kHang.count());
}

// A rank whose join failed waits a bounded time for the root its process
// hosts to finish answering the others, then leaves with a WARN naming it.
TEST_F(CommVerdicts, ARootStillAnsweringIsLeftAfterTheBoundWithAWarning) {
  WarnCapture warns;
  auto s = nccom_test::loopback_settings("flat", kHandshake);
  auto id = nccom::comm::get_unique_id(nullptr, 2, false, s);  // starts a root; nobody checks in
  ASSERT_TRUE(id) << id.error().message;
  const auto begin = Clock::now();
  nccom::comm::settle_root(id->root, 200ms);
  const long long took = ms_since(begin);
  EXPECT_TRUE(warns.seen({"bootstrap root " + id->root.to_string(),
                          "is still answering after 200 ms; leaving anyway"}));
  EXPECT_GE(took, 200);
  EXPECT_LT(took, kHandshake.count());
  // A root that has finished is settled at once, without a word.
  ASSERT_TRUE(eventually([] { return nccom::comm::reap_roots() == 0; }, kHandshake + kHang));
}

}  // namespace

// A process that checks in as `rank` (a complete check-in) and dies: its
// connection closes once the root holds `checked_in` check-ins, this one
// among them. False when the check-in could not be sent or was not seen.
bool check_in_and_die(const UniqueId& id, int rank, int nranks, int checked_in) {
  nccom::bootstrap::ExtInfo info;
  info.rank = rank;
  info.nranks = nranks;
  info.listen_address = loopback(9);
  const auto bytes = info.encode();
  RawClient dying(id.root);
  return dying.connected() &&
         dying.hello(id.secret, rank, nranks)
             .header(MsgType::kInfoToRoot, bytes.size())
             .bytes(bytes.data(), bytes.size())
             .send() &&
         root_has_checkins(id.root.port(), checked_in);
}

// A rank that checked in and died during the handshake (a process that is
// then restarted): the ranks already in fail at once naming it. Its
// replacement and a rank that starts only now arrive after the verdict and
// are told it too, instead of finding no root and retrying their connect
// until their own timeout. Once every rank has been told, the root ends
// without waiting for its deadline.
TEST_F(CommVerdicts, RanksArrivingAfterAVerdictAreToldIt) {
  auto s = nccom_test::loopback_settings("flat", 20000ms);
  const auto begin = Clock::now();
  auto id = nccom::comm::get_unique_id(nullptr, 4, false, s);
  ASSERT_TRUE(id) << id.error().message;
  auto spec = [&](int rank) {
    RankSpec r;
    r.rank = rank;
    r.nranks = 4;
    r.id = id->encode();
    r.settings = s;
    return r;
  };
  RankThreads first;
  first.start(spec(0));
  first.start(spec(1));
  ASSERT_TRUE(root_has_checkins(id->root.port(), 2));
  ASSERT_TRUE(check_in_and_die(*id, 2, 4, 3));
  for (const auto& r : first.join()) {
    ASSERT_FALSE(r.status) << "rank " << r.rank;
    EXPECT_TRUE(has(r.message(), {"rank 2 (", "hung up before the handshake finished"}));
  }

  RankThreads late;
  late.start(spec(2));  // the replacement
  late.start(spec(3));
  for (const auto& r : late.join()) {
    ASSERT_FALSE(r.status) << "rank " << r.rank;
    EXPECT_TRUE(has(r.message(), {"refused the communicator", "rank 2 (",
                                  "hung up before the handshake finished"}));
    EXPECT_LT(r.took, s.handshake_timeout / 4) << "told by a timeout, not by the root";
  }
  EXPECT_TRUE(eventually([] { return nccom::comm::reap_roots() == 0; }, kHang));
  EXPECT_LT(Clock::now() - begin, s.handshake_timeout) << "the root waited for its deadline";
}

// A runtime that retries its init on the same root port (a fixed
// NEURON_RT_ROOT_COMM_ID) while the failed root still answers late ranks:
// the new root takes the port at once.
TEST_F(CommVerdicts, ARetryOnTheSameRootPortTakesItFromTheFailedRoot) {
  auto s = nccom_test::loopback_settings("flat", 20000ms);
  auto id = nccom::comm::get_unique_id(nullptr, 2, false, s);
  ASSERT_TRUE(id) << id.error().message;
  ASSERT_TRUE(check_in_and_die(*id, 1, 2, 1));
  RankThreads late;
  RankSpec r;
  r.rank = 0;
  r.nranks = 2;
  r.id = id->encode();
  r.settings = s;
  late.start(r);
  const auto results = late.join();
  ASSERT_EQ(results.size(), 1u);
  ASSERT_FALSE(results[0].status);
  EXPECT_TRUE(has(results[0].message(), {"rank 1 (", "hung up before the handshake finished"}));
  ASSERT_EQ(nccom::comm::reap_roots(), 1) << "the failed root no longer answers late ranks";

  auto retry_settings = nccom_test::loopback_settings("flat", 1000ms);
  UniqueId retry = *id;
  retry.secret ^= 1;
  auto bound = nccom::comm::start_root(retry, id->root, 2, retry_settings);
  ASSERT_TRUE(bound) << bound.error().message;
  EXPECT_EQ(bound->port(), id->root.port());
}
