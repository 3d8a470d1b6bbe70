// Teardown and failures: closing with requests in flight, peers that vanish,
// and no leaked fds or threads (suite NetSocketFailure).
#include "socket_fixture.h"

namespace nccom_test {
namespace {

using NetSocketFailure = SocketTest;

TEST_F(NetSocketFailure, CloseWithRequestsPending) {
  ASSERT_EQ(plugin().configure(2, 2, nullptr), ncclSuccess);
  Endpoints e = connect_pair(net, lo);
  std::vector<char> big(64 << 20, 'q'), in(64 << 20), small(100);
  // Unmatched receives, unanswered sends, and one large transfer under way.
  for (int i = 0; i < 5; ++i) post_recv(net, e.recv, small, 99);
  void* req = nullptr;
  for (int i = 0; i < 5; ++i)
    ASSERT_EQ(net->isend(e.send, small.data(), 10, 42, nullptr, &req), ncclSuccess);
  void* rbig = post_recv(net, e.recv, in, 1);
  void* sbig = nullptr;
  ASSERT_EQ(net->isend(e.send, big.data(), static_cast<int>(big.size()), 1, nullptr, &sbig),
            ncclSuccess);
  // A few tests start the transfer (the callers' tests move bytes too); a
  // request reported done is not tested again.
  int rdone = 0, sdone = 0;
  for (int i = 0; i < 5; ++i) {
    if (rdone == 0) {
      ASSERT_EQ(net->test(rbig, &rdone, nullptr), ncclSuccess);
    }
    if (sdone == 0) {
      ASSERT_EQ(net->test(sbig, &sdone, nullptr), ncclSuccess);
    }
  }
  EXPECT_EQ(rdone, 0)
      << "64 MiB arrived within five tests: the transfer was not under way at the close";
  close_pair(net, e);  // joins the helper threads while they may be mid-transfer
}

TEST_F(NetSocketFailure, SenderGoneFailsPendingReceives) {
  Endpoints e = connect_pair(net, lo);
  std::vector<char> buf(1000);
  void* req = post_recv(net, e.recv, buf);
  size_t warnings = warning_count();
  ASSERT_EQ(net->closeSend(e.send), ncclSuccess);
  e.send = nullptr;
  EXPECT_EQ(wait_request(net, req), ncclRemoteError);
  EXPECT_GT(warning_count(), warnings);
  // Later receives fail at once.
  void* data = buf.data();
  int size = 1000, tag = 0;
  EXPECT_EQ(net->irecv(e.recv, 1, &data, &size, &tag, nullptr, &req), ncclRemoteError);
  close_pair(net, e);
}

TEST_F(NetSocketFailure, ReceiverGoneFailsPendingSends) {
  Endpoints e = connect_pair(net, lo);
  std::vector<char> buf(kRendezvousBytes, 'z');
  void* before = nullptr;  // rendezvous (above the eager limit): waits for a clear-to-send
  ASSERT_EQ(net->isend(e.send, buf.data(), kRendezvousBytes, 0, nullptr, &before), ncclSuccess);
  ASSERT_EQ(net->closeRecv(e.recv), ncclSuccess);
  e.recv = nullptr;
  EXPECT_EQ(wait_request(net, before), ncclRemoteError);
  void* after = nullptr;
  ncclResult_t rc = net->isend(e.send, buf.data(), 1000, 0, nullptr, &after);
  if (rc == ncclSuccess && after != nullptr) rc = wait_request(net, after);
  EXPECT_TRUE(rc == ncclRemoteError || rc == ncclSystemError) << rc;
  close_pair(net, e);
}

// Starts a 64 MiB striped transfer and polls both ends until the payload
// is moving; false if it finished first.
bool start_big_transfer(const ncclNet_v6_t* net, Endpoints& e, std::vector<char>& out,
                        std::vector<char>& in, void** sreq, void** rreq) {
  *rreq = post_recv(net, e.recv, in);
  EXPECT_EQ(net->isend(e.send, out.data(), static_cast<int>(out.size()), 0, nullptr, sreq),
            ncclSuccess);
  // A few tests get it going (the callers' tests move bytes themselves, a
  // few MiB at most in five turns); the caller goes away right after.
  int sdone = 0, rdone = 0;
  for (int i = 0; i < 5 && !sdone && !rdone; ++i) {
    EXPECT_EQ(net->test(*rreq, &rdone, nullptr), ncclSuccess);
    if (!rdone) {
      EXPECT_EQ(net->test(*sreq, &sdone, nullptr), ncclSuccess);
    }
  }
  return !sdone && !rdone;
}

TEST_F(NetSocketFailure, SenderGoneMidTransferFailsTheReceive) {
  // One socket: the kernel can hold at most its send and receive buffers
  // (a few MiB) of the 64 MiB in flight, so when the send is not complete
  // some payload has certainly not left. With 8 sockets the buffers can
  // swallow the whole message, and the receive may then rightly complete.
  ASSERT_EQ(plugin().configure(1, 1, nullptr), ncclSuccess);
  Endpoints e = connect_pair(net, lo);
  std::vector<char> out(64 << 20, 'm'), in(64 << 20);
  void *sreq = nullptr, *rreq = nullptr;
  if (!start_big_transfer(net, e, out, in, &sreq, &rreq))
    GTEST_SKIP() << "the transfer finished before the peer could vanish";
  // The send is not complete, so some payload never left: the receive cannot finish.
  ASSERT_EQ(net->closeSend(e.send), ncclSuccess);
  e.send = nullptr;
  EXPECT_EQ(wait_request(net, rreq), ncclRemoteError);
  close_pair(net, e);
}

TEST_F(NetSocketFailure, ReceiverGoneMidTransferEndsTheSend) {
  ASSERT_EQ(plugin().configure(4, 2, nullptr), ncclSuccess);
  Endpoints e = connect_pair(net, lo);
  std::vector<char> out(64 << 20, 'm'), in(64 << 20);
  void *sreq = nullptr, *rreq = nullptr;
  if (!start_big_transfer(net, e, out, in, &sreq, &rreq))
    GTEST_SKIP() << "the transfer finished before the peer could vanish";
  ASSERT_EQ(net->closeRecv(e.recv), ncclSuccess);
  e.recv = nullptr;
  // What was left may still fit in the kernel's buffers (then the send
  // completes, as TCP allows); either way the send ends, and the next fail:
  // an eager send does not read the control socket, but helper 0 watches it
  // for the peer's close; at worst one send went into the kernel's buffer
  // before the close was seen, and the one after it fails on the reset.
  ncclResult_t rc = wait_request(net, sreq);
  EXPECT_TRUE(rc == ncclSuccess || rc == ncclRemoteError || rc == ncclSystemError) << rc;
  int completed = 0;
  for (int i = 0; i < 2; ++i) {
    void* next = nullptr;
    rc = net->isend(e.send, out.data(), 1000, 0, nullptr, &next);
    if (rc == ncclSuccess && next != nullptr) rc = wait_request(net, next);
    if (rc != ncclSuccess) break;
    ++completed;
  }
  EXPECT_TRUE(rc == ncclRemoteError || rc == ncclSystemError) << rc;
  EXPECT_LE(completed, 1);
  close_pair(net, e);
}

TEST_F(NetSocketFailure, ConnectToAClosedListenerFails) {
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* listen = nullptr;
  ASSERT_EQ(net->listen(lo, handle, &listen), ncclSuccess);
  ASSERT_EQ(net->closeListen(listen), ncclSuccess);
  // v6: the non-blocking connect ends in an error, not an endless "not yet".
  void* send = nullptr;
  ncclResult_t rc = ncclSuccess;
  auto deadline = Clock::now() + kWait;
  while (rc == ncclSuccess && send == nullptr && Clock::now() < deadline)
    rc = net->connect(lo, handle, &send);
  EXPECT_EQ(rc, ncclRemoteError);
  EXPECT_EQ(send, nullptr);
  // v4: the blocking connect returns too.
  EXPECT_EQ(plugin().v4->connect(lo, handle, &send), ncclRemoteError);
  EXPECT_EQ(send, nullptr);
}

TEST_F(NetSocketFailure, NoFdOrThreadLeaks) {
  // Warm up once so that lazily created process state is not counted.
  {
    Endpoints e = connect_pair(net, lo);
    close_pair(net, e);
  }
  int fds = open_fds();
  int threads = live_threads();
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(plugin().configure(round == 0 ? 1 : 4, round == 0 ? 1 : 2, nullptr), ncclSuccess);
    Endpoints e = connect_pair(net, lo);
    EXPECT_GT(open_fds(), fds);
    EXPECT_GT(live_threads(), threads);
    std::vector<char> out(1 << 20, 'l'), in(1 << 20);
    void* rreq = post_recv(net, e.recv, in);
    void* sreq = nullptr;
    ASSERT_EQ(net->isend(e.send, out.data(), 1 << 20, 0, nullptr, &sreq), ncclSuccess);
    std::thread sender([&] { EXPECT_EQ(wait_request(net, sreq), ncclSuccess); });
    EXPECT_EQ(wait_request(net, rreq), ncclSuccess);
    sender.join();
    // An abandoned half-open connect is released by fini.
    char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
    void *l2 = nullptr, *s2 = nullptr;
    ASSERT_EQ(net->listen(lo, handle, &l2), ncclSuccess);
    ASSERT_EQ(net->connect(lo, handle, &s2), ncclSuccess);
    if (s2 != nullptr) {
      EXPECT_EQ(net->closeSend(s2), ncclSuccess);
    }
    EXPECT_EQ(net->closeListen(l2), ncclSuccess);
    close_pair(net, e);
    ASSERT_EQ(net->fini(), ncclSuccess);
    ASSERT_EQ(net->init(test_logger), ncclSuccess);
  }
  EXPECT_EQ(open_fds(), fds);
  EXPECT_EQ(live_threads(), threads);
}

}  // namespace
}  // namespace nccom_test
