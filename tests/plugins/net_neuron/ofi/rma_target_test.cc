// NetOfiRmaTarget: an RMA read whose target lives in another process that
// never tests the target comm. With manual-progress providers (tcp;ofi_rxm,
// shm) the read moves only while the target's endpoint is progressed; the
// target process here only polls a receive on a *different* comm — as the
// NET_NEURON transport's sending proxy does once its sends are done, while
// the receiver confirms a slice with a 4-byte read from the send comm
// (docs/decisions/net-ofi.md, "Progress across comms") — or calls nothing
// at all, as a rank whose work is done and that waits in a barrier elsewhere.
// Before test() progressed other comms and before the idle-progress thread,
// these reads never completed.
#include "build_paths.h"
#include "child_process.h"
#include "handle_hex.h"
#include "net_ofi_fixture.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace net_ofi_test {
namespace {

using Clock = std::chrono::steady_clock;

using net_ofi_wire::from_hex;
using net_ofi_wire::to_hex;

// The peer's pattern (rma_target_peer.cc).
uint8_t peer_byte(size_t i) { return static_cast<uint8_t>(i * 7 + 3); }

// test() only `request` until it finishes or `limit` passes.
bool test_only(const ncclNet_v6_t* net, Pending& p, std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    int done = 0;
    p.rc = net->test(p.request, &done, &p.size);
    if (p.rc != ncclSuccess) return true;
    if (done != 0) {
      p.done = true;
      return true;
    }
    std::this_thread::yield();
  }
  return false;
}

class NetOfiRmaTarget : public NetOfiProvider {
 protected:
  // The child must use the provider this process really has (libfabric reads
  // FI_PROVIDER once per process).
  void SetUp() override {
    NetOfiProvider::SetUp();
    if (!IsSkipped() && !HasFailure()) setenv("FI_PROVIDER", selected_provider().c_str(), 1);
  }
  void read_from_untested_comm(bool idle);
};

// The whole scenario; `idle`: the peer calls nothing once set up (else it
// tests a receive on its other comm).
void NetOfiRmaTarget::read_from_untested_comm(bool idle) {
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* listen = nullptr;
  ASSERT_EQ(net->listen(0, handle, &listen), ncclSuccess) << captured_logs();
  nccom_test::TempDir dir;
  const std::string release_file = dir.path() + "/release";
  std::vector<std::string> args{to_hex(handle, sizeof handle)};
  if (idle) args.insert(args.end(), {"idle", release_file});
  nccom_test::RunningChild child = nccom_test::start_child(NET_OFI_RMA_TARGET_PEER, args, {});

  // Our recv comm R reads from the peer's send comm S.
  void* recv = nullptr;
  const auto accept_deadline = Clock::now() + std::chrono::seconds(30);
  while (recv == nullptr && Clock::now() < accept_deadline) {
    ASSERT_EQ(net->accept(listen, &recv), ncclSuccess) << captured_logs();
  }
  ASSERT_NE(recv, nullptr) << captured_logs();
  // Our send comm S2 releases the peer at the end.
  const std::string handle_line = nccom_test::read_line(child, std::chrono::seconds(20));
  char peer_handle[NCCL_NET_HANDLE_MAXSIZE];
  ASSERT_EQ(handle_line.rfind("handle=", 0), 0u) << handle_line;
  ASSERT_TRUE(from_hex(handle_line.substr(7), peer_handle, sizeof peer_handle)) << handle_line;
  void* send = nullptr;
  // Its own budget: connection setup is slow under sanitizers on a loaded host.
  const auto connect_deadline = Clock::now() + std::chrono::seconds(30);
  while (send == nullptr && Clock::now() < connect_deadline) {
    ASSERT_EQ(net->connect(0, peer_handle, &send), ncclSuccess) << captured_logs();
  }
  ASSERT_NE(send, nullptr) << captured_logs();
  const std::string region_line = nccom_test::read_line(child, std::chrono::seconds(20));
  uint64_t remote = 0, key = 0;
  ASSERT_EQ(std::sscanf(region_line.c_str(), "region=%" SCNx64 " key=%" SCNx64, &remote, &key), 2)
      << region_line;

  // From now on the peer tests only its receive on the other comm. The
  // 4-byte read is the transport's slice confirmation; the second read
  // moves the whole region.
  std::vector<uint8_t> local(64 << 10, 0);
  void* local_mh = nullptr;
  ASSERT_EQ(net->regMr(recv, local.data(), local.size(), NCCL_PTR_HOST, &local_mh), ncclSuccess);
  Pending word;
  ASSERT_EQ(net->iread(recv, local.data(), 4, local_mh, remote + 100, key, &word.request),
            ncclSuccess)
      << captured_logs();
  ASSERT_NE(word.request, nullptr);
  const bool word_finished = test_only(net, word, std::chrono::seconds(10));
  const std::vector<uint8_t> word_bytes(local.begin(), local.begin() + 4);
  Pending whole;
  bool whole_finished = false;
  if (word_finished && word.done) {
    ASSERT_EQ(net->iread(recv, local.data(), local.size(), local_mh, remote, key, &whole.request),
              ncclSuccess)
        << captured_logs();
    ASSERT_NE(whole.request, nullptr);
    whole_finished = test_only(net, whole, std::chrono::seconds(10));
  }

  // Release the peer whatever happened, so it ends now.
  if (idle) {
    FILE* file = std::fopen(release_file.c_str(), "w");
    ASSERT_NE(file, nullptr) << release_file;
    std::fclose(file);
    EXPECT_EQ(nccom_test::read_line(child, std::chrono::seconds(20)), "released file");
  } else {
    uint8_t release = 42;
    Pending sent;
    ASSERT_EQ(net->isend(send, &release, 1, 1, nullptr, &sent.request), ncclSuccess);
    ASSERT_NE(sent.request, nullptr);
    EXPECT_TRUE(wait_all(net, {&sent})) << captured_logs();
    EXPECT_EQ(nccom_test::read_line(child, std::chrono::seconds(20)), "released 42");
  }
  const nccom_test::ChildResult result = nccom_test::finish_child(child);
  EXPECT_EQ(result.exit_code, 0) << result.err;

  ASSERT_TRUE(word_finished) << "the 4-byte read from a comm its process does not test never "
                                "completed (10 s)\n"
                             << captured_logs();
  ASSERT_EQ(word.rc, ncclSuccess) << captured_logs();
  EXPECT_EQ(word.size, 4);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(word_bytes[i], peer_byte(100 + i)) << i;
  ASSERT_TRUE(whole_finished) << "the 64 KiB read never completed (10 s)\n" << captured_logs();
  ASSERT_EQ(whole.rc, ncclSuccess) << captured_logs();
  for (size_t i = 0; i < local.size(); ++i) ASSERT_EQ(local[i], peer_byte(i)) << i;

  EXPECT_EQ(net->deregMr(recv, local_mh), ncclSuccess);
  EXPECT_EQ(net->closeSend(send), ncclSuccess);
  EXPECT_EQ(net->closeRecv(recv), ncclSuccess);
  EXPECT_EQ(net->closeListen(listen), ncclSuccess);
}

// The peer keeps calling test(), but never on the read's target comm: every
// test() progresses other comms in turn.
TEST_P(NetOfiRmaTarget, ReadCompletesWhileTargetPollsAnotherComm) {
  if (std::string lack = machine_lacks_rma(); !lack.empty())
    NCCOM_SKIP_MACHINE_LACKS(kLibfabricProvider) << lack;
  ASSERT_EQ(props.rma_supported, 1)
      << GetParam() << " offers RMA (fi_getinfo), the plugin does not";
  read_from_untested_comm(false);
}

// The peer calls nothing at all (its work done, it waits elsewhere): the
// plugin's idle-progress thread progresses its comms.
TEST_P(NetOfiRmaTarget, ReadCompletesWhileTargetProcessCallsNothing) {
  if (std::string lack = machine_lacks_rma(); !lack.empty())
    NCCOM_SKIP_MACHINE_LACKS(kLibfabricProvider) << lack;
  ASSERT_EQ(props.rma_supported, 1)
      << GetParam() << " offers RMA (fi_getinfo), the plugin does not";
  read_from_untested_comm(true);
}

INSTANTIATE_TEST_SUITE_P(Providers, NetOfiRmaTarget, ::testing::Values("tcp;ofi_rxm", "shm"),
                         provider_test_name);

}  // namespace
}  // namespace net_ofi_test
