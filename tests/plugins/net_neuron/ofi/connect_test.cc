// NetOfiProvider: devices, properties and the non-blocking connection setup.
#include "net_ofi_fixture.h"

#include <cstring>
#include <thread>

namespace net_ofi_test {
namespace {

TEST_P(NetOfiProvider, DevicesHaveSaneProperties) {
  for (int dev = 0; dev < ndev; ++dev) {
    ncclNetProperties_v6_t p{};
    ASSERT_EQ(net->getProperties(dev, &p), ncclSuccess);
    ASSERT_NE(p.name, nullptr);
    EXPECT_GT(std::strlen(p.name), 0u);
    EXPECT_EQ(p.ptrSupport, NCCL_PTR_HOST);  // no Neuron device memory here
    EXPECT_EQ(p.regIsGlobal, 0);
    EXPECT_GT(p.speed, 0);
    EXPECT_GT(p.maxComms, 0);
    EXPECT_EQ(p.maxRecvs, 1);
    EXPECT_TRUE(p.rma_supported == 0 || p.rma_supported == 1);
    EXPECT_EQ(p.max_mr_key_size, p.rma_supported ? 8u : 0u);
    if (!p.rma_supported) {
      EXPECT_EQ(p.max_write_inline_size, 0u);
    }

    ncclNetProperties_v4_t v4{};
    ASSERT_EQ(plugin().v4->getProperties(dev, &v4), ncclSuccess);
    EXPECT_STREQ(v4.name, p.name);
    EXPECT_EQ(v4.guid, p.guid);
    EXPECT_EQ(v4.speed, p.speed);
    EXPECT_EQ(v4.maxComms, p.maxComms);
  }
  ncclNetProperties_v6_t p{};
  EXPECT_EQ(net->getProperties(ndev, &p), ncclInvalidArgument);
  EXPECT_EQ(net->getProperties(-1, &p), ncclInvalidArgument);
  EXPECT_EQ(net->getProperties(0, nullptr), ncclInvalidArgument);
  // RMA where the provider offers it (asked of libfabric directly).
  if (machine_lacks_rma().empty()) {
    EXPECT_EQ(props.rma_supported, 1) << GetParam() << " offers RMA (fi_getinfo)";
  }
}

TEST_P(NetOfiProvider, ListenConnectAcceptAreNonBlocking) {
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  std::memset(handle, 0xA5, sizeof handle);
  void* listen = nullptr;
  ASSERT_EQ(net->listen(0, handle, &listen), ncclSuccess) << captured_logs();
  ASSERT_NE(listen, nullptr);
  // Nothing connected yet: accept answers at once, without a comm.
  void* recv = reinterpret_cast<void*>(0x1);
  ASSERT_EQ(net->accept(listen, &recv), ncclSuccess);
  EXPECT_EQ(recv, nullptr);

  void* send = nullptr;
  int connect_calls = 0;
  int accept_calls = 1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while ((send == nullptr || recv == nullptr) && std::chrono::steady_clock::now() < deadline) {
    if (send == nullptr) {
      ASSERT_EQ(net->connect(0, handle, &send), ncclSuccess) << captured_logs();
      ++connect_calls;
    }
    if (recv == nullptr) {
      ASSERT_EQ(net->accept(listen, &recv), ncclSuccess) << captured_logs();
      ++accept_calls;
    }
  }
  ASSERT_NE(send, nullptr) << captured_logs();
  ASSERT_NE(recv, nullptr) << captured_logs();
  EXPECT_GE(accept_calls, 2);
  RecordProperty("connect_calls", connect_calls);

  // One connection per listen comm.
  void* again = nullptr;
  EXPECT_EQ(net->accept(listen, &again), ncclInvalidUsage);
  EXPECT_EQ(again, nullptr);

  int payload = 42;
  int received = 0;
  EXPECT_EQ(send_recv({listen, send, recv}, &payload, sizeof payload, nullptr, &received,
                      sizeof received, nullptr, 1),
            static_cast<int>(sizeof payload));
  EXPECT_EQ(received, 42);

  EXPECT_EQ(net->closeListen(listen), ncclSuccess);
  EXPECT_EQ(net->closeSend(send), ncclSuccess);
  EXPECT_EQ(net->closeRecv(recv), ncclSuccess);
  // Closed comms are unknown from then on.
  EXPECT_EQ(net->closeSend(send), ncclInvalidArgument);
  EXPECT_EQ(net->closeRecv(recv), ncclInvalidArgument);
  EXPECT_EQ(net->closeListen(listen), ncclInvalidArgument);
}

TEST_P(NetOfiProvider, CloseListenBeforeAccept) {
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* listen = nullptr;
  ASSERT_EQ(net->listen(0, handle, &listen), ncclSuccess);
  EXPECT_EQ(net->closeListen(listen), ncclSuccess);
}

TEST_P(NetOfiProvider, PairsDoNotSeeEachOthersMessages) {
  CommPair a = connect_pair();
  CommPair b = connect_pair();
  ASSERT_FALSE(HasFailure());
  uint64_t to_a = 0xAAAA, to_b = 0xBBBB, got_a = 0, got_b = 0;
  // Same tag on both pairs; post b's receive first.
  Pending send_a, send_b, recv_a, recv_b;
  void* rbuf_b = &got_b;
  void* rbuf_a = &got_a;
  int size = sizeof(uint64_t);
  int tag = 9;
  ASSERT_EQ(net->irecv(b.recv, 1, &rbuf_b, &size, &tag, nullptr, &recv_b.request), ncclSuccess);
  ASSERT_EQ(net->isend(a.send, &to_a, size, tag, nullptr, &send_a.request), ncclSuccess);
  ASSERT_EQ(net->irecv(a.recv, 1, &rbuf_a, &size, &tag, nullptr, &recv_a.request), ncclSuccess);
  ASSERT_EQ(net->isend(b.send, &to_b, size, tag, nullptr, &send_b.request), ncclSuccess);
  ASSERT_TRUE(wait_all(net, {&send_a, &send_b, &recv_a, &recv_b})) << captured_logs();
  EXPECT_EQ(got_a, 0xAAAAu);
  EXPECT_EQ(got_b, 0xBBBBu);
  close_pair(a);
  close_pair(b);
}

// v4: 64-byte handles, blocking connect and accept (here on two threads).
TEST_P(NetOfiProvider, V4TableBlocksAndTransfers) {
  const ncclNet_v4_t* v4 = plugin().v4;
  char handle[NCCL_NET_HANDLE_MAXSIZE_V4] = {};
  void* listen = nullptr;
  ASSERT_EQ(v4->listen(0, handle, &listen), ncclSuccess) << captured_logs();
  void* send = nullptr;
  ncclResult_t connect_rc = ncclInternalError;
  std::thread connector([&] { connect_rc = v4->connect(0, handle, &send); });
  void* recv = nullptr;
  EXPECT_EQ(v4->accept(listen, &recv), ncclSuccess);
  connector.join();
  ASSERT_EQ(connect_rc, ncclSuccess) << captured_logs();
  ASSERT_NE(send, nullptr);
  ASSERT_NE(recv, nullptr);

  char out[100] = "v4 payload", in[100] = {};
  void *sreq = nullptr, *rreq = nullptr;
  ASSERT_EQ(v4->isend(send, out, sizeof out, nullptr, &sreq), ncclSuccess);
  ASSERT_EQ(v4->irecv(recv, in, sizeof in, nullptr, &rreq), ncclSuccess);
  Pending s{sreq}, r{rreq};
  ASSERT_TRUE(wait_all(net, {&s, &r})) << captured_logs();
  EXPECT_EQ(r.size, 100);
  EXPECT_STREQ(in, "v4 payload");
  EXPECT_EQ(v4->closeSend(send), ncclSuccess);
  EXPECT_EQ(v4->closeRecv(recv), ncclSuccess);
  EXPECT_EQ(v4->closeListen(listen), ncclSuccess);
}

}  // namespace
}  // namespace net_ofi_test
