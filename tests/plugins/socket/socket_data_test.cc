// The data path: sizes, striping, tags, back-pressure (suites NetSocketData*).
#include "socket_fixture.h"
#include "socket_worker.h"

#include <sched.h>

#include <algorithm>

namespace nccom_test {
namespace {

// One message each way of the pair, sender and receiver in their own threads.
void transfer(const ncclNet_v6_t* net, Endpoints& e, size_t size, unsigned seed) {
  std::vector<char> out(size), in(size + 1, 0x33);
  fill_pattern(out, seed);
  int ssize = -1, rsize = -1;
  ncclResult_t src = ncclInternalError, rrc = ncclInternalError;
  std::thread receiver([&] {
    void* req = nullptr;
    void* data = in.data();
    int cap = static_cast<int>(in.size());
    int tag = 7;
    rrc = net->irecv(e.recv, 1, &data, &cap, &tag, nullptr, &req);
    if (rrc == ncclSuccess) rrc = wait_request(net, req, &rsize);
  });
  std::thread sender([&] {
    void* req = nullptr;
    src = net->isend(e.send, out.data(), static_cast<int>(size), 7, nullptr, &req);
    if (src == ncclSuccess) src = wait_request(net, req, &ssize);
  });
  sender.join();
  receiver.join();
  ASSERT_EQ(src, ncclSuccess);
  ASSERT_EQ(rrc, ncclSuccess);
  EXPECT_EQ(ssize, static_cast<int>(size));
  EXPECT_EQ(rsize, static_cast<int>(size));
  EXPECT_TRUE(std::equal(out.begin(), out.end(), in.begin()))
      << "payload of " << size << " bytes differs";
  EXPECT_EQ(in[size], 0x33) << "wrote past the message";
}

// Sizes × socket layouts (nsocks_per_thread, nthreads).
struct Layout {
  int nsocks;
  int nthreads;
};
class NetSocketDataSizes : public SocketTest,
                           public ::testing::WithParamInterface<std::tuple<size_t, Layout>> {};

TEST_P(NetSocketDataSizes, PayloadArrivesIntact) {
  auto [size, layout] = GetParam();
  ASSERT_EQ(plugin().configure(layout.nsocks, layout.nthreads, nullptr), ncclSuccess);
  Endpoints e = connect_pair(net, lo);
  ASSERT_NE(e.send, nullptr);
  transfer(net, e, size, 1);
  transfer(net, e, size, 2);  // the comm is reusable, socket rotation stays in step
  close_pair(net, e);
}

INSTANTIATE_TEST_SUITE_P(
    , NetSocketDataSizes,
    ::testing::Combine(::testing::Values(size_t{0}, size_t{1}, size_t{4096}, size_t{65537},
                                         size_t{1} << 20, (size_t{1} << 20) + 7, size_t{64} << 20),
                       ::testing::Values(Layout{1, 1}, Layout{4, 2}, Layout{3, 1})),
    [](const auto& info) {
      const Layout& layout = std::get<1>(info.param);
      return "bytes" + std::to_string(std::get<0>(info.param)) + "_socks" +
             std::to_string(layout.nsocks) + "x" + std::to_string(layout.nthreads);
    });

using NetSocketData = SocketTest;

TEST_F(NetSocketData, BackPressureAtMaxRequests) {
  Endpoints e = connect_pair(net, lo);
  std::vector<char> rbuf(NCCL_NET_MAX_REQUESTS * 16), sbuf(NCCL_NET_MAX_REQUESTS * 16);
  for (size_t i = 0; i < sbuf.size(); ++i) sbuf[i] = static_cast<char>(i / 16);
  std::vector<void*> rreqs, sreqs;
  for (int i = 0; i < NCCL_NET_MAX_REQUESTS; ++i) {
    void* req = nullptr;
    void* data = &rbuf[i * 16];
    int size = 16, tag = 1;
    ASSERT_EQ(net->irecv(e.recv, 1, &data, &size, &tag, nullptr, &req), ncclSuccess);
    ASSERT_NE(req, nullptr) << "receive " << i;
    rreqs.push_back(req);
  }
  for (int i = 0; i < NCCL_NET_MAX_REQUESTS; ++i) {
    void* req = nullptr;
    ASSERT_EQ(net->isend(e.send, &sbuf[i * 16], 16, 1, nullptr, &req), ncclSuccess);
    ASSERT_NE(req, nullptr) << "send " << i;
    sreqs.push_back(req);
  }
  // One more of each: "cannot post now", not an error.
  void* req = reinterpret_cast<void*>(0x1);
  void* data = rbuf.data();
  int size = 16, tag = 1;
  EXPECT_EQ(net->irecv(e.recv, 1, &data, &size, &tag, nullptr, &req), ncclSuccess);
  EXPECT_EQ(req, nullptr);
  req = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(net->isend(e.send, sbuf.data(), 16, 1, nullptr, &req), ncclSuccess);
  EXPECT_EQ(req, nullptr);

  // Completing one frees one slot.
  std::thread sender([&] {
    for (void* r : sreqs) EXPECT_EQ(wait_request(net, r), ncclSuccess);
  });
  for (void* r : rreqs) EXPECT_EQ(wait_request(net, r), ncclSuccess);
  sender.join();
  EXPECT_EQ(rbuf, sbuf);  // same tag: completed in posting order
  req = nullptr;
  EXPECT_EQ(net->isend(e.send, sbuf.data(), 16, 1, nullptr, &req), ncclSuccess);
  EXPECT_NE(req, nullptr);
  close_pair(net, e);
}

TEST_F(NetSocketData, TagsMatchInOrderPerTag) {
  ASSERT_EQ(plugin().configure(2, 2, nullptr), ncclSuccess);
  Endpoints e = connect_pair(net, lo);
  // Sends: tag 1 (A), tag 2 (B), tag 1 (C), tag 2 (D, large), tag 3 (E).
  const int send_tags[] = {1, 2, 1, 2, 3};
  const size_t send_sizes[] = {100, 200, 300, 1 << 20, 50};
  std::vector<std::vector<char>> out(5);
  for (int i = 0; i < 5; ++i) {
    out[i].resize(send_sizes[i]);
    fill_pattern(out[i], 100 + i);
  }
  // Receives posted in another order: 3, 2, 2, 1, 1 → E, B, D, A, C.
  const int recv_tags[] = {3, 2, 2, 1, 1};
  const int expect_msg[] = {4, 1, 3, 0, 2};
  std::vector<std::vector<char>> in(5, std::vector<char>(2 << 20));
  std::vector<void*> rreqs(5);
  for (int i = 0; i < 5; ++i) {
    void* data = in[i].data();
    int size = static_cast<int>(in[i].size()), tag = recv_tags[i];
    ASSERT_EQ(net->irecv(e.recv, 1, &data, &size, &tag, nullptr, &rreqs[i]), ncclSuccess);
  }
  std::vector<void*> sreqs(5);
  for (int i = 0; i < 5; ++i)
    ASSERT_EQ(net->isend(e.send, out[i].data(), static_cast<int>(out[i].size()), send_tags[i],
                         nullptr, &sreqs[i]),
              ncclSuccess);
  std::thread sender([&] {
    for (void* r : sreqs) EXPECT_EQ(wait_request(net, r), ncclSuccess);
  });
  for (int i = 4; i >= 0; --i) {  // tested out of order too
    int size = -1;
    ASSERT_EQ(wait_request(net, rreqs[i], &size), ncclSuccess);
    const std::vector<char>& want = out[expect_msg[i]];
    ASSERT_EQ(size, static_cast<int>(want.size())) << "receive " << i;
    EXPECT_EQ(memcmp(in[i].data(), want.data(), want.size()), 0) << "receive " << i;
  }
  sender.join();
  close_pair(net, e);
}

// Above the eager limit (socket_eager_test.cc has the small messages).
TEST_F(NetSocketData, UnexpectedMessagesWaitForTheirReceive) {
  Endpoints e = connect_pair(net, lo);
  constexpr int kA = kRendezvousBytes + 1000, kB = kRendezvousBytes + 3000;
  std::vector<char> a(kA, 'a'), b(kB, 'b');
  void *sa = nullptr, *sb = nullptr;
  ASSERT_EQ(net->isend(e.send, a.data(), kA, 10, nullptr, &sa), ncclSuccess);
  ASSERT_EQ(net->isend(e.send, b.data(), kB, 20, nullptr, &sb), ncclSuccess);
  int done = 1;
  for (int i = 0; i < 100; ++i) ASSERT_EQ(net->test(sa, &done, nullptr), ncclSuccess);
  EXPECT_EQ(done, 0);  // rendezvous: nothing completes before a receive is posted
  std::vector<char> rb(kB + 1000), ra(kB + 1000);
  void *rq_b = nullptr, *rq_a = nullptr;
  void* data = rb.data();
  int size = kB + 1000, tag = 20;
  ASSERT_EQ(net->irecv(e.recv, 1, &data, &size, &tag, nullptr, &rq_b), ncclSuccess);
  int got = -1;
  std::thread sender([&] { EXPECT_EQ(wait_request(net, sb), ncclSuccess); });
  ASSERT_EQ(wait_request(net, rq_b, &got), ncclSuccess);
  sender.join();
  EXPECT_EQ(got, kB);
  EXPECT_EQ(rb[kB - 1], 'b');
  data = ra.data();
  tag = 10;
  ASSERT_EQ(net->irecv(e.recv, 1, &data, &size, &tag, nullptr, &rq_a), ncclSuccess);
  std::thread sender2([&] { EXPECT_EQ(wait_request(net, sa), ncclSuccess); });
  ASSERT_EQ(wait_request(net, rq_a, &got), ncclSuccess);
  sender2.join();
  EXPECT_EQ(got, kA);
  EXPECT_EQ(ra[kA - 1], 'a');
  close_pair(net, e);
}

// Helper thread 0 leaves a comm's control socket to a caller that keeps
// calling in, and takes it back once that caller stops (kCallerGrace): a
// rendezvous completes when only one side is ever tested after posting —
// the other side's header, clear-to-send and payload are its helper's.
TEST_F(NetSocketData, ARendezvousCompletesWhenOnlyOneSideIsTested) {
  Endpoints e = connect_pair(net, lo);
  for (bool test_sender : {true, false}) {
    SCOPED_TRACE(test_sender ? "only the send is tested" : "only the receive is tested");
    std::vector<char> out(100000), in(100000, 0);
    fill_pattern(out, test_sender ? 1 : 2);
    void *data = in.data(), *rreq = nullptr, *sreq = nullptr;
    int size = static_cast<int>(in.size()), tag = 4;
    if (test_sender) {
      ASSERT_EQ(net->irecv(e.recv, 1, &data, &size, &tag, nullptr, &rreq), ncclSuccess);
      ASSERT_EQ(net->isend(e.send, out.data(), 100000, 4, nullptr, &sreq), ncclSuccess);
      ASSERT_EQ(wait_request(net, sreq), ncclSuccess);  // the receiver's helper did its part
    } else {
      ASSERT_EQ(net->isend(e.send, out.data(), 100000, 4, nullptr, &sreq), ncclSuccess);
      ASSERT_EQ(net->irecv(e.recv, 1, &data, &size, &tag, nullptr, &rreq), ncclSuccess);
      int got = -1;
      ASSERT_EQ(wait_request(net, rreq, &got), ncclSuccess);  // the sender's helper did its part
      EXPECT_EQ(got, 100000);
      EXPECT_EQ(in, out);
    }
    ASSERT_NE(rreq, nullptr);
    ASSERT_NE(sreq, nullptr);
    // The untested side finishes too.
    ASSERT_EQ(wait_request(net, test_sender ? rreq : sreq), ncclSuccess);
    EXPECT_EQ(in, out);
  }
  close_pair(net, e);
}

namespace {

// A caller that tests a few times and then stops, on each side in turn: the
// helpers it stood in for take the rest over within their grace and the other
// side, tested alone, completes. Whether three tests leave the message
// unfinished depends on the scheduler (a loaded machine can let the helpers
// take over between two tests and finish it): a message finished that early
// is checked and another one posted, a bounded number of times.
void stop_testing_mid_message(const ncclNet_v6_t* net, Endpoints& e) {
  constexpr int kBytes = 16 << 20;  // many assist turns
  constexpr int kMessages = 5;
  for (bool sender_stops : {true, false}) {
    SCOPED_TRACE(sender_stops ? "the sender stops testing" : "the receiver stops testing");
    bool stopped_mid_message = false;
    for (int message = 0; message < kMessages && !stopped_mid_message; ++message) {
      std::vector<char> out(kBytes), in(kBytes, 0);
      fill_pattern(out, (sender_stops ? 3 : 4) + message);
      void *data = in.data(), *rreq = nullptr, *sreq = nullptr;
      int size = kBytes, tag = 7;
      ASSERT_EQ(net->irecv(e.recv, 1, &data, &size, &tag, nullptr, &rreq), ncclSuccess);
      ASSERT_EQ(net->isend(e.send, out.data(), kBytes, 7, nullptr, &sreq), ncclSuccess);
      ASSERT_NE(rreq, nullptr);
      ASSERT_NE(sreq, nullptr);
      void* stopping = sender_stops ? sreq : rreq;
      void* tested = sender_stops ? rreq : sreq;
      int done = 0;
      int got = -1;  // the receive's size, from whichever side tested it last
      for (int i = 0; i < 3 && done == 0; ++i)
        ASSERT_EQ(net->test(stopping, &done, sender_stops ? nullptr : &got), ncclSuccess);
      stopped_mid_message = done == 0;
      ASSERT_EQ(wait_request(net, tested, sender_stops ? &got : nullptr), ncclSuccess);
      if (stopped_mid_message) {
        ASSERT_EQ(wait_request(net, stopping, sender_stops ? nullptr : &got), ncclSuccess);
      }
      EXPECT_EQ(got, kBytes);
      EXPECT_EQ(in, out);
    }
    EXPECT_TRUE(stopped_mid_message)
        << kMessages << " messages of 16 MiB each moved in three tests: the case this checks "
        << "did not happen";
  }
}

}  // namespace

// The caller's test moves its side's bytes itself (its helper steps aside
// while tests keep coming).
TEST_F(NetSocketData, ACallerThatStopsTestingMidMessageLeavesTheRestToItsHelper) {
  Endpoints e = connect_pair(net, lo);
  stop_testing_mid_message(net, e);
  close_pair(net, e);
}

// Which helpers the caller stands in for: the first one while the process
// has a core for the caller and each helper, all of them once it has not.
TEST(NetSocketAssist, TheCallerMovesEveryHelpersSocketsOnlyWhenTheyCannotHaveACoreEach) {
  using nccom::socket::assisted_workers;
  EXPECT_EQ(assisted_workers(0, 4), 0u);
  EXPECT_EQ(assisted_workers(1, 1), 1u);
  EXPECT_EQ(assisted_workers(1, 2), 1u);
  EXPECT_EQ(assisted_workers(2, 2), 2u);
  EXPECT_EQ(assisted_workers(2, 3), 1u);
  EXPECT_EQ(assisted_workers(8, 8), 8u);
  EXPECT_EQ(assisted_workers(8, 128), 1u);
  EXPECT_EQ(assisted_workers(4, 0), 1u) << "CPU count unknown: only the first, as before";
}

// Two helper threads per comm made on a thread pinned to one CPU: the caller
// stands in for both (and says so), and a caller that stops testing still
// leaves both helpers' sockets to them.
TEST_F(NetSocketData, OnOneCpuTheCallerStandsInForEveryHelperAndHandsBackToAll) {
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof saved, &saved), 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &saved)) {
      CPU_SET(cpu, &one);
      break;
    }
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  ASSERT_EQ(plugin().configure(1, 2, nullptr), ncclSuccess);
  const size_t infos = info_count();
  Endpoints e = connect_pair(net, lo);
  ASSERT_EQ(sched_setaffinity(0, sizeof saved, &saved), 0);
  const auto lines = infos_containing(infos, "helper threads on 1 usable CPUs");
  ASSERT_EQ(lines.size(), 2u) << "one line per comm, send and receive";
  for (const std::string& line : lines)
    EXPECT_NE(line.find("sockets of 2 of them"), std::string::npos) << line;
  stop_testing_mid_message(net, e);
  transfer(net, e, 8 << 20, 11);
  close_pair(net, e);
}

// Rendezvous sizes; an eager message's send has completed before the
// receiver sees it (socket_eager_test.cc, TooLargeForTheReceiveFailsTheReceiveOnly).
TEST_F(NetSocketData, ReceiveSmallerThanMessageFailsBothSidesAndCommSurvives) {
  Endpoints e = connect_pair(net, lo);
  std::vector<char> out(kRendezvousBytes, 'x'), in(10000);
  size_t warnings = warning_count();
  void *sreq = nullptr, *rreq = nullptr;
  void* data = in.data();
  int size = 10000, tag = 0;
  ASSERT_EQ(net->irecv(e.recv, 1, &data, &size, &tag, nullptr, &rreq), ncclSuccess);
  ASSERT_EQ(net->isend(e.send, out.data(), kRendezvousBytes, 0, nullptr, &sreq), ncclSuccess);
  ncclResult_t send_rc = ncclSuccess;
  std::thread sender([&] { send_rc = wait_request(net, sreq); });
  EXPECT_EQ(wait_request(net, rreq), ncclInternalError);
  sender.join();
  EXPECT_EQ(send_rc, ncclRemoteError);
  EXPECT_GT(warning_count(), warnings);
  // Smaller messages than the buffer report their own size; the comm still works.
  std::vector<char> big(1000);
  data = big.data();
  size = 1000;
  ASSERT_EQ(net->irecv(e.recv, 1, &data, &size, &tag, nullptr, &rreq), ncclSuccess);
  ASSERT_EQ(net->isend(e.send, out.data(), 10, 0, nullptr, &sreq), ncclSuccess);
  int rsize = -1, ssize = -1;
  std::thread sender2([&] { EXPECT_EQ(wait_request(net, sreq, &ssize), ncclSuccess); });
  EXPECT_EQ(wait_request(net, rreq, &rsize), ncclSuccess);
  sender2.join();
  EXPECT_EQ(rsize, 10);
  EXPECT_EQ(ssize, 10);
  EXPECT_EQ(big[9], 'x');
  close_pair(net, e);
}

TEST_F(NetSocketData, PipelinedStripedStream) {
  ASSERT_EQ(plugin().configure(4, 2, nullptr), ncclSuccess);
  Endpoints e = connect_pair(net, lo);
  constexpr int kMessages = 400;
  constexpr int kWindow = 32;
  auto size_of = [](int i) { return static_cast<size_t>((i * 7919) % (300 << 10)); };
  const std::vector<std::vector<char>> out = patterned_messages(kMessages, size_of);
  std::thread sender = send_windowed(net, e.send, out, kWindow);
  std::vector<std::vector<char>> in(kWindow, std::vector<char>(300 << 10));
  for (int base = 0; base < kMessages; base += kWindow) {
    int n = std::min(kWindow, kMessages - base);
    std::vector<void*> reqs(n);
    for (int j = 0; j < n; ++j) {
      void* data = in[j].data();
      int size = static_cast<int>(in[j].size()), tag = (base + j) % 3;
      ASSERT_EQ(net->irecv(e.recv, 1, &data, &size, &tag, nullptr, &reqs[j]), ncclSuccess);
      ASSERT_NE(reqs[j], nullptr);
    }
    for (int j = 0; j < n; ++j) {
      int size = -1;
      ASSERT_EQ(wait_request(net, reqs[j], &size), ncclSuccess);
      ASSERT_EQ(size, static_cast<int>(out[base + j].size()));
      ASSERT_TRUE(std::equal(out[base + j].begin(), out[base + j].end(), in[j].begin()))
          << "message " << base + j;
    }
  }
  sender.join();
  close_pair(net, e);
}

TEST_F(NetSocketData, FlushCompletesImmediately) {
  Endpoints e = connect_pair(net, lo);
  char buf[8];
  void *data = buf, *req = nullptr;
  int size = 8;
  ASSERT_EQ(net->iflush(e.recv, 1, &data, &size, nullptr, &req), ncclSuccess);
  ASSERT_NE(req, nullptr);
  int done = 0;
  EXPECT_EQ(net->test(req, &done, nullptr), ncclSuccess);
  EXPECT_EQ(done, 1);
  EXPECT_EQ(net->iflush(e.send, 1, &data, &size, nullptr, &req), ncclInvalidArgument);
  EXPECT_EQ(net->irecv(e.recv, 2, &data, &size, nullptr, nullptr, &req), ncclInvalidArgument);
  EXPECT_EQ(net->isend(e.send, buf, -1, 0, nullptr, &req), ncclInvalidArgument);
  EXPECT_EQ(net->isend(e.recv, buf, 1, 0, nullptr, &req), ncclInvalidArgument);
  close_pair(net, e);
}

}  // namespace
}  // namespace nccom_test
