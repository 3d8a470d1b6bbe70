// NetOfiProvider: peer liveness (docs/internals/net-ofi.md, "Peer liveness").
// A pending request whose peer closed its comm, or whose peer process was
// SIGKILLed, fails with an error within a bound; a healthy idle pair is never
// reported dead; with liveness off (on either side) a receive whose sender
// closed stays pending, as before. Killed peer processes:
// liveness_killed_test.cc.
#include "liveness_support.h"

#include <cstring>

namespace net_ofi_test {
namespace {

class NetOfiLiveness : public NetOfiProvider {
 protected:
  void configure(int enabled, int check_ms, int grace_ms) {
    ASSERT_NE(plugin().configure_liveness, nullptr);
    ASSERT_EQ(plugin().configure_liveness(enabled, check_ms, grace_ms), ncclSuccess);
  }

  // listen with the listener's setting, connect with the connector's.
  CommPair pair_with(bool listener_on, bool connector_on) {
    CommPair pair;
    char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
    configure(listener_on ? 1 : 0, 10, 20);
    EXPECT_EQ(net->listen(0, handle, &pair.listen), ncclSuccess) << captured_logs();
    configure(connector_on ? 1 : 0, 10, 20);
    const auto deadline = Clock::now() + std::chrono::seconds(20);
    while ((pair.send == nullptr || pair.recv == nullptr) && Clock::now() < deadline &&
           !HasFailure()) {
      if (pair.send == nullptr) {
        EXPECT_EQ(net->connect(0, handle, &pair.send), ncclSuccess);
      }
      if (pair.recv == nullptr) {
        EXPECT_EQ(net->accept(pair.listen, &pair.recv), ncclSuccess);
      }
    }
    EXPECT_TRUE(pair.send != nullptr && pair.recv != nullptr) << captured_logs();
    return pair;
  }

  // Post a receive, close the sender, and check the receive stays pending
  // (neither done nor failed) for `window`.
  void expect_receive_stays_pending(CommPair& pair, milliseconds window) {
    char buf[64];
    void* data = buf;
    int size = sizeof buf;
    int tag = 5;
    void* request = nullptr;
    ASSERT_EQ(net->irecv(pair.recv, 1, &data, &size, &tag, nullptr, &request), ncclSuccess);
    ASSERT_NE(request, nullptr);
    ASSERT_EQ(net->closeSend(pair.send), ncclSuccess);
    pair.send = nullptr;
    const Outcome out = test_until(net, request, Clock::now(), window);
    EXPECT_FALSE(out.finished) << "rc " << out.rc << " after " << out.after.count() << " ms\n"
                               << captured_logs();
    EXPECT_FALSE(logs_contain("closed its comm")) << captured_logs();
  }
};

TEST_P(NetOfiLiveness, KnobsAreValidated) {
  ASSERT_NE(plugin().configure_liveness, nullptr);
  const auto set = plugin().configure_liveness;
  EXPECT_EQ(set(2, 100, 500), ncclInvalidArgument);
  EXPECT_EQ(set(-1, 100, 500), ncclInvalidArgument);
  EXPECT_EQ(set(1, 0, 500), ncclInvalidArgument);
  EXPECT_EQ(set(1, 60001, 500), ncclInvalidArgument);
  EXPECT_EQ(set(1, 100, -1), ncclInvalidArgument);
  EXPECT_EQ(set(1, 100, 600001), ncclInvalidArgument);
  EXPECT_EQ(set(0, 1, 0), ncclSuccess);
  EXPECT_EQ(set(1, 60000, 600000), ncclSuccess);
}

// (a) The sender closes its comm while a receive is posted.
TEST_P(NetOfiLiveness, ClosedSenderFailsPostedReceiveWithinBound) {
  CommPair pair = connect_pair();
  ASSERT_FALSE(HasFailure());
  char buf[4096];
  void* data = buf;
  int size = sizeof buf;
  int tag = 7;
  void* request = nullptr;
  ASSERT_EQ(net->irecv(pair.recv, 1, &data, &size, &tag, nullptr, &request), ncclSuccess);
  ASSERT_NE(request, nullptr);
  ASSERT_FALSE(test_until(net, request, Clock::now(), milliseconds(0)).finished);

  ASSERT_EQ(net->closeSend(pair.send), ncclSuccess);
  pair.send = nullptr;
  const Outcome out = test_until(net, request, Clock::now(), milliseconds(10000));
  ASSERT_TRUE(out.finished) << "still pending after " << out.after.count() << " ms\n"
                            << captured_logs();
  EXPECT_FALSE(out.done);
  EXPECT_EQ(out.rc, ncclRemoteError) << captured_logs();
  EXPECT_LT(out.after, kBound);
  EXPECT_GE(out.after, milliseconds(kLivenessGraceMs)) << "failed before the grace period";
  RecordProperty("failed_after_ms", static_cast<int>(out.after.count()));
  EXPECT_TRUE(logs_name_peer("closed its comm")) << captured_logs();
  EXPECT_TRUE(logs_contain("recv comm")) << captured_logs();
  EXPECT_TRUE(logs_contain(pointer_text(pair.recv))) << captured_logs();

  // The comm takes no new requests: they could never complete.
  void* again = nullptr;
  EXPECT_EQ(net->irecv(pair.recv, 1, &data, &size, &tag, nullptr, &again), ncclRemoteError);
  EXPECT_EQ(again, nullptr);
  close_pair(pair);
}

// The receiver closes its comm while a rendezvous-sized send waits for it.
TEST_P(NetOfiLiveness, ClosedReceiverFailsPendingSendWithinBound) {
  CommPair pair = connect_pair();
  ASSERT_FALSE(HasFailure());
  std::vector<char> out_buf(kLargeMessage, 's');
  void* mh = nullptr;
  ASSERT_EQ(net->regMr(pair.send, out_buf.data(), out_buf.size(), NCCL_PTR_HOST, &mh), ncclSuccess);
  void* request = nullptr;
  ASSERT_EQ(net->isend(pair.send, out_buf.data(), kLargeMessage, 9, mh, &request), ncclSuccess);
  ASSERT_NE(request, nullptr);
  ASSERT_EQ(net->closeRecv(pair.recv), ncclSuccess);
  pair.recv = nullptr;
  const Outcome out = test_until(net, request, Clock::now(), milliseconds(10000));
  ASSERT_TRUE(out.finished) << "still pending after " << out.after.count() << " ms\n"
                            << captured_logs();
  EXPECT_FALSE(out.done) << "a send nobody received reported success";
  EXPECT_TRUE(out.rc == ncclRemoteError || out.rc == ncclSystemError) << out.rc;
  EXPECT_LT(out.after, kBound);
  RecordProperty("failed_after_ms", static_cast<int>(out.after.count()));
  EXPECT_EQ(net->deregMr(pair.send, mh), ncclSuccess);
  close_pair(pair);
}

// Data the sender handed over before closing is still delivered.
TEST_P(NetOfiLiveness, DataSentBeforeCloseIsStillReceived) {
  CommPair pair = connect_pair();
  ASSERT_FALSE(HasFailure());
  char out_buf[64];
  std::memset(out_buf, 'd', sizeof out_buf);
  Pending send;
  ASSERT_EQ(net->isend(pair.send, out_buf, sizeof out_buf, 3, nullptr, &send.request), ncclSuccess);
  ASSERT_NE(send.request, nullptr);
  ASSERT_TRUE(wait_all(net, {&send})) << captured_logs();
  ASSERT_TRUE(send.done) << send.rc;
  ASSERT_EQ(net->closeSend(pair.send), ncclSuccess);
  pair.send = nullptr;

  char in_buf[64] = {};
  void* data = in_buf;
  int size = sizeof in_buf;
  int tag = 3;
  Pending recv;
  ASSERT_EQ(net->irecv(pair.recv, 1, &data, &size, &tag, nullptr, &recv.request), ncclSuccess);
  ASSERT_NE(recv.request, nullptr);
  ASSERT_TRUE(wait_all(net, {&recv})) << captured_logs();
  EXPECT_TRUE(recv.done) << recv.rc << "\n" << captured_logs();
  EXPECT_EQ(recv.size, 64);
  EXPECT_EQ(std::memcmp(in_buf, out_buf, sizeof in_buf), 0);
  close_pair(pair);
}

// (c) A healthy pair with no traffic for many check periods is not reported
// dead; its pending receive then completes normally.
TEST_P(NetOfiLiveness, HealthyIdlePairIsNotReportedDead) {
  configure(1, 10, 20);
  CommPair pair = connect_pair();
  ASSERT_FALSE(HasFailure());
  char in_buf[64] = {};
  void* data = in_buf;
  int size = sizeof in_buf;
  int tag = 11;
  Pending recv;
  ASSERT_EQ(net->irecv(pair.recv, 1, &data, &size, &tag, nullptr, &recv.request), ncclSuccess);
  ASSERT_NE(recv.request, nullptr);
  // 500 ms: 50 check periods, 16 times check + grace.
  const Outcome idle = test_until(net, recv.request, Clock::now(), milliseconds(500));
  ASSERT_FALSE(idle.finished) << "rc " << idle.rc << "\n" << captured_logs();

  char out_buf[64];
  std::memset(out_buf, 'h', sizeof out_buf);
  Pending send;
  ASSERT_EQ(net->isend(pair.send, out_buf, sizeof out_buf, tag, nullptr, &send.request),
            ncclSuccess);
  ASSERT_TRUE(wait_all(net, {&send, &recv})) << captured_logs();
  EXPECT_TRUE(send.done && recv.done) << send.rc << " " << recv.rc << "\n" << captured_logs();
  EXPECT_EQ(std::memcmp(in_buf, out_buf, sizeof in_buf), 0);
  EXPECT_FALSE(logs_contain("requests of this comm")) << captured_logs();
  close_pair(pair);
}

// (d) Liveness off — on both sides, or on either one — restores the old
// behaviour: the receive stays pending (for 30 times check + grace here).
TEST_P(NetOfiLiveness, OffOnBothSidesKeepsReceivePending) {
  CommPair pair = pair_with(false, false);
  ASSERT_FALSE(HasFailure());
  expect_receive_stays_pending(pair, milliseconds(900));
  close_pair(pair);
}

TEST_P(NetOfiLiveness, OffAtTheListenerKeepsReceivePending) {
  CommPair pair = pair_with(false, true);
  ASSERT_FALSE(HasFailure());
  expect_receive_stays_pending(pair, milliseconds(300));
  close_pair(pair);
}

TEST_P(NetOfiLiveness, OffAtTheConnectorKeepsReceivePending) {
  CommPair pair = pair_with(true, false);
  ASSERT_FALSE(HasFailure());
  expect_receive_stays_pending(pair, milliseconds(300));
  close_pair(pair);
}

// A connect to a listener that is gone fails instead of waiting for the
// host's timeout: its liveness socket refuses the connection.
TEST_P(NetOfiLiveness, ConnectToAClosedListenerFails) {
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* listen = nullptr;
  ASSERT_EQ(net->listen(0, handle, &listen), ncclSuccess);
  ASSERT_EQ(net->closeListen(listen), ncclSuccess);
  void* send = nullptr;
  ncclResult_t rc = ncclSuccess;
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (rc == ncclSuccess && send == nullptr && Clock::now() < deadline) {
    rc = net->connect(0, handle, &send);
  }
  EXPECT_EQ(rc, ncclRemoteError) << captured_logs();
  EXPECT_TRUE(logs_contain("liveness channel to peer")) << captured_logs();
  EXPECT_EQ(send, nullptr);
}

// With liveness off, a rendezvous-sized send to a receiver that closed its
// comm stays pending too (both providers report nothing): liveness is what
// fails it in ClosedReceiverFailsPendingSendWithinBound.
TEST_P(NetOfiLiveness, OffKeepsSendToAClosedReceiverPending) {
  CommPair pair = pair_with(false, false);
  ASSERT_FALSE(HasFailure());
  std::vector<char> out_buf(kLargeMessage, 's');
  void* mh = nullptr;
  ASSERT_EQ(net->regMr(pair.send, out_buf.data(), out_buf.size(), NCCL_PTR_HOST, &mh), ncclSuccess);
  void* request = nullptr;
  ASSERT_EQ(net->isend(pair.send, out_buf.data(), kLargeMessage, 9, mh, &request), ncclSuccess);
  ASSERT_NE(request, nullptr);
  ASSERT_EQ(net->closeRecv(pair.recv), ncclSuccess);
  pair.recv = nullptr;
  const Outcome out = test_until(net, request, Clock::now(), milliseconds(300));
  EXPECT_FALSE(out.finished) << "rc " << out.rc << " after " << out.after.count() << " ms";
  EXPECT_EQ(net->deregMr(pair.send, mh), ncclSuccess);
  close_pair(pair);
}

INSTANTIATE_TEST_SUITE_P(Providers, NetOfiLiveness, ::testing::Values("tcp;ofi_rxm", "shm"),
                         provider_test_name);

}  // namespace
}  // namespace net_ofi_test
