// Teardown and failures: closing with requests in flight, peers that vanish,
// and no leaked fds or threads (suite NetSocketFailure).
#include "socket_fixture.h"
#include "socket_raw_peer.h"

#include <algorithm>
#include <climits>
#include <cstdio>

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

// At most how many payload bytes the kernel can hold in flight on one TCP
// socket between two processes that stopped moving them: the sender's send
// buffer plus the receiver's receive buffer at their largest
// (net.ipv4.tcp_wmem and tcp_rmem, third field; the plugin sets neither).
size_t kernel_buffer_bound() {
  auto largest = [](const char* path) -> size_t {
    std::FILE* f = std::fopen(path, "r");
    unsigned long min = 0, def = 0, max = 0;
    const bool ok = f != nullptr && std::fscanf(f, "%lu %lu %lu", &min, &def, &max) == 3;
    if (f != nullptr) std::fclose(f);
    EXPECT_TRUE(ok) << "cannot read " << path;
    return ok ? max : 0;
  };
  return largest("/proc/sys/net/ipv4/tcp_wmem") + largest("/proc/sys/net/ipv4/tcp_rmem");
}

// A rendezvous message the kernel's buffers on one socket can never swallow
// whole, so a send of it cannot complete while its receiver reads nothing.
size_t unbufferable_size() {
  const size_t bytes = std::max<size_t>(64 << 20, 2 * kernel_buffer_bound() + (1 << 20));
  EXPECT_LE(bytes, static_cast<size_t>(INT_MAX)) << "the kernel's TCP buffers are enormous";
  return std::min<size_t>(bytes, INT_MAX);
}

// The sender is a raw peer that announces 64 MiB, gets its clear-to-send,
// sends 1 MiB and vanishes: the plugin's receive is certainly mid-payload.
TEST_F(NetSocketFailure, SenderGoneMidTransferFailsTheReceive) {
  RawPeer peer;
  dial_as_raw_peer(net, lo, 0, 0, &peer);
  ASSERT_NE(peer.recv_comm, nullptr);
  std::vector<char> in(64 << 20);
  void* rreq = post_recv(net, peer.recv_comm, in);
  const wire::CtrlMsg header{wire::kMsgHeader, 0, 0, in.size()};
  ASSERT_TRUE(peer.socks[0].write_all(&header, sizeof header));
  wire::CtrlMsg cts{};
  ASSERT_TRUE(peer.socks[0].read_all(&cts, sizeof cts));
  ASSERT_EQ(cts.type, wire::kMsgClearToSend);
  ASSERT_EQ(cts.value, wire::kCtsAccept);
  const std::vector<char> part(1 << 20, 'm');
  ASSERT_TRUE(peer.socks[1].write_all(part.data(), part.size()));
  peer.socks.clear();  // closes the control and the data socket
  EXPECT_EQ(wait_request(net, rreq), ncclRemoteError) << "63 MiB of the payload never came";
  EXPECT_EQ(net->closeRecv(peer.recv_comm), ncclSuccess);
  EXPECT_EQ(net->closeListen(peer.listen), ncclSuccess);
}

// The receiver is a raw peer that grants the clear-to-send, reads 1 MiB and
// vanishes; the message is larger than the kernel can buffer, so the send
// was certainly not complete.
TEST_F(NetSocketFailure, ReceiverGoneMidTransferEndsTheSend) {
  ASSERT_EQ(plugin().configure(1, 1, nullptr), ncclSuccess);  // one data socket
  RawListener listener;
  ASSERT_TRUE(listener.open());
  void* send_comm = nullptr;
  const auto deadline = Clock::now() + kWait;
  while (send_comm == nullptr && Clock::now() < deadline)
    ASSERT_EQ(net->connect(lo, listener.handle, &send_comm), ncclSuccess);
  ASSERT_NE(send_comm, nullptr);
  std::vector<RawSocket> socks(2);
  for (int i = 0; i < 2; ++i) {
    RawSocket s(accept(listener.sock.fd, nullptr, nullptr));
    wire::Hello hello{};
    ASSERT_TRUE(s.read_all(&hello, sizeof hello));
    ASSERT_LT(hello.index, 2);
    socks[hello.index] = std::move(s);
  }
  // No eager grant: every message is rendezvous.
  std::vector<char> out(unbufferable_size(), 'm');
  void* sreq = nullptr;
  ASSERT_EQ(net->isend(send_comm, out.data(), static_cast<int>(out.size()), 0, nullptr, &sreq),
            ncclSuccess);
  wire::CtrlMsg header{};
  ASSERT_TRUE(socks[0].read_all(&header, sizeof header));
  ASSERT_EQ(header.type, wire::kMsgHeader);
  const wire::CtrlMsg cts{wire::kMsgClearToSend, 0, header.id, wire::kCtsAccept};
  ASSERT_TRUE(socks[0].write_all(&cts, sizeof cts));
  std::vector<char> part(1 << 20);
  ASSERT_TRUE(socks[1].read_all(part.data(), part.size()));
  socks.clear();  // unread payload left: the kernel resets the connection
  ncclResult_t rc = wait_request(net, sreq);
  EXPECT_TRUE(rc == ncclRemoteError || rc == ncclSystemError)
      << rc << ": " << out.size() << " bytes cannot have left with 1 MiB read";
  // The comm is dead: the next send fails, at once or when tested.
  void* next = nullptr;
  rc = net->isend(send_comm, out.data(), 1000, 0, nullptr, &next);
  if (rc == ncclSuccess && next != nullptr) rc = wait_request(net, next);
  EXPECT_TRUE(rc == ncclRemoteError || rc == ncclSystemError) << rc;
  EXPECT_EQ(net->closeSend(send_comm), ncclSuccess);
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
