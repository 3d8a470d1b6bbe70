// NetOfiLivenessKilled: the peer is another process (net_ofi_liveness_peer),
// SIGKILLed while this one waits on it: the pending receive or send fails
// within the bound, naming the peer (docs/internals/net-ofi.md, "Peer
// liveness").
#include "build_paths.h"
#include "child_process.h"
#include "handle_hex.h"
#include "liveness_support.h"

#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace net_ofi_test {
namespace {

using net_ofi_wire::from_hex;
using net_ofi_wire::to_hex;

// What a SIGKILLed peer over the shm provider leaves in /dev/shm: its
// endpoints, which libnccom-net names "nc<pid>.<n>" in hex
// (plugins/net_neuron/ofi/endpoint.cc). Removed so runs do not pile them up.
void remove_shm_endpoints_of(pid_t pid) {
  char prefix[32];
  std::snprintf(prefix, sizeof prefix, "nc%x.", static_cast<unsigned>(pid));
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0) std::filesystem::remove(entry.path(), ec);
  }
}

class NetOfiLivenessKilled : public NetOfiProvider {
 protected:
  // The child must use the provider this process really has: libfabric
  // reads FI_PROVIDER once per process, so when the whole binary runs in one
  // process that is the first test's provider.
  void SetUp() override {
    NetOfiProvider::SetUp();
    if (!IsSkipped() && !HasFailure()) setenv("FI_PROVIDER", selected_provider().c_str(), 1);
  }

  void kill_and_expect_failure(nccom_test::RunningChild& child, void* request,
                               bool expect_remote_error) {
    ASSERT_FALSE(test_until(net, request, Clock::now(), milliseconds(0)).finished)
        << captured_logs();
    ASSERT_EQ(kill(child.pid, SIGKILL), 0);
    const auto killed = Clock::now();
    const Outcome out = test_until(net, request, killed, milliseconds(10000));
    const nccom_test::ChildResult result = nccom_test::finish_child(child);
    EXPECT_EQ(result.signal, SIGKILL) << result.err;
    remove_shm_endpoints_of(child.pid);
    ASSERT_TRUE(out.finished) << "still pending after " << out.after.count() << " ms\n"
                              << captured_logs();
    EXPECT_FALSE(out.done);
    if (expect_remote_error) {
      EXPECT_EQ(out.rc, ncclRemoteError) << captured_logs();
    } else {
      EXPECT_TRUE(out.rc == ncclRemoteError || out.rc == ncclSystemError) << out.rc;
    }
    EXPECT_LT(out.after, kBound);
    RecordProperty("failed_after_ms", static_cast<int>(out.after.count()));
  }
};

TEST_P(NetOfiLivenessKilled, KilledSenderProcessFailsPostedReceive) {
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* listen = nullptr;
  ASSERT_EQ(net->listen(0, handle, &listen), ncclSuccess);
  nccom_test::RunningChild child = nccom_test::start_child(
      NET_OFI_LIVENESS_PEER, {"connect", to_hex(handle, sizeof handle)}, {});
  void* recv = nullptr;
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (recv == nullptr && Clock::now() < deadline) {
    ASSERT_EQ(net->accept(listen, &recv), ncclSuccess) << captured_logs();
  }
  ASSERT_NE(recv, nullptr) << captured_logs();
  ASSERT_EQ(nccom_test::read_line(child, std::chrono::seconds(20)), "connected");

  char buf[4096];
  void* data = buf;
  int size = sizeof buf;
  int tag = 1;
  void* request = nullptr;
  ASSERT_EQ(net->irecv(recv, 1, &data, &size, &tag, nullptr, &request), ncclSuccess);
  ASSERT_NE(request, nullptr);
  kill_and_expect_failure(child, request, true);
  EXPECT_TRUE(logs_name_peer("went away without closing its comm")) << captured_logs();
  EXPECT_EQ(net->closeRecv(recv), ncclSuccess);
  EXPECT_EQ(net->closeListen(listen), ncclSuccess);
}

TEST_P(NetOfiLivenessKilled, KilledReceiverProcessFailsPendingSend) {
  nccom_test::RunningChild child = nccom_test::start_child(NET_OFI_LIVENESS_PEER, {"listen"}, {});
  const std::string line = nccom_test::read_line(child, std::chrono::seconds(20));
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  ASSERT_EQ(line.rfind("handle=", 0), 0u) << line;
  ASSERT_TRUE(from_hex(line.substr(7), handle, sizeof handle)) << line;
  void* send = nullptr;
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (send == nullptr && Clock::now() < deadline) {
    ASSERT_EQ(net->connect(0, handle, &send), ncclSuccess) << captured_logs();
  }
  ASSERT_NE(send, nullptr) << captured_logs();
  ASSERT_EQ(nccom_test::read_line(child, std::chrono::seconds(20)), "accepted");

  std::vector<char> out_buf(kLargeMessage, 'k');
  void* mh = nullptr;
  ASSERT_EQ(net->regMr(send, out_buf.data(), out_buf.size(), NCCL_PTR_HOST, &mh), ncclSuccess);
  void* request = nullptr;
  ASSERT_EQ(net->isend(send, out_buf.data(), kLargeMessage, 1, mh, &request), ncclSuccess);
  ASSERT_NE(request, nullptr);
  // The provider may notice the dead connection itself (ncclSystemError or
  // ncclRemoteError from its completion); otherwise liveness fails it.
  kill_and_expect_failure(child, request, false);
  EXPECT_EQ(net->deregMr(send, mh), ncclSuccess);
  EXPECT_EQ(net->closeSend(send), ncclSuccess);
}

INSTANTIATE_TEST_SUITE_P(Providers, NetOfiLivenessKilled, ::testing::Values("tcp;ofi_rxm", "shm"),
                         provider_test_name);

}  // namespace
}  // namespace net_ofi_test
