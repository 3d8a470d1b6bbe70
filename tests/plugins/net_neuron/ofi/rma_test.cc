// NetOfiProvider: memory registration, getMrKey, iread/iwrite/iwriteInline.
// The peer's address and key travel "out of band" — here, a local variable.
#include "net_ofi_fixture.h"

#include <cstring>

namespace net_ofi_test {
namespace {

std::vector<uint8_t> pattern(size_t size, uint8_t seed) {
  std::vector<uint8_t> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(seed ^ (i * 13 + (i >> 8)));
  return bytes;
}

uint64_t address_of(const void* p) { return reinterpret_cast<uint64_t>(p); }

// Drive the target comm (manual-progress providers move RMA only when the
// target's endpoint is progressed) until `ready` holds.
template <class Ready>
bool progress_until(const ncclNet_v6_t* net, void* recv_comm, Ready ready) {
  int dummy = 0;
  void* buf = &dummy;
  int size = sizeof dummy;
  int tag = 0x7777;
  void* request = nullptr;
  if (net->irecv(recv_comm, 1, &buf, &size, &tag, nullptr, &request) != ncclSuccess) return false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!ready() && std::chrono::steady_clock::now() < deadline) {
    int done = 0;
    if (net->test(request, &done, nullptr) != ncclSuccess) return false;
  }
  return ready();  // the dummy receive is discarded with its comm
}

TEST_P(NetOfiProvider, IreadReadsThePeersRegisteredBuffer) {
  if (std::string lack = machine_lacks_rma(); !lack.empty())
    NCCOM_SKIP_MACHINE_LACKS(kLibfabricProvider) << lack;
  ASSERT_EQ(props.rma_supported, 1)
      << GetParam() << " offers RMA (fi_getinfo), the plugin does not";
  CommPair pair = connect_pair();
  ASSERT_FALSE(HasFailure());
  constexpr size_t kSize = 1 << 20;
  std::vector<uint8_t> remote = pattern(kSize, 0x5A);
  std::vector<uint8_t> local(kSize, 0);
  void *remote_mh = nullptr, *local_mh = nullptr;
  ASSERT_EQ(net->regMr(pair.send, remote.data(), kSize, NCCL_PTR_HOST, &remote_mh), ncclSuccess);
  ASSERT_EQ(net->regMr(pair.recv, local.data(), kSize, NCCL_PTR_HOST, &local_mh), ncclSuccess);
  uint64_t key = 0;
  ASSERT_EQ(net->getMrKey(remote_mh, &key), ncclSuccess);

  Pending whole;
  ASSERT_EQ(net->iread(pair.recv, local.data(), kSize, local_mh, address_of(remote.data()), key,
                       &whole.request),
            ncclSuccess)
      << captured_logs();
  ASSERT_TRUE(wait_all(net, {&whole})) << captured_logs();
  ASSERT_EQ(whole.rc, ncclSuccess) << captured_logs();
  EXPECT_EQ(whole.size, static_cast<int>(kSize));
  EXPECT_EQ(local, remote);

  // A 4-byte read from the middle of the region (the host's semaphore reads).
  uint32_t word = 0;
  std::memcpy(&remote[12345], "\x01\x02\x03\x04", 4);
  Pending part;
  ASSERT_EQ(net->iread(pair.recv, local.data(), 4, local_mh, address_of(&remote[12345]), key,
                       &part.request),
            ncclSuccess);
  ASSERT_TRUE(wait_all(net, {&part})) << captured_logs();
  ASSERT_EQ(part.rc, ncclSuccess) << captured_logs();
  std::memcpy(&word, local.data(), 4);
  EXPECT_EQ(word, 0x04030201u);

  // The send side may read too (NET_NEURON's remote-MR reads on the send side).
  std::vector<uint8_t> on_recv = pattern(4096, 0x11), into(4096, 0);
  void *on_recv_mh = nullptr, *into_mh = nullptr;
  ASSERT_EQ(net->regMr(pair.recv, on_recv.data(), 4096, NCCL_PTR_HOST, &on_recv_mh), ncclSuccess);
  ASSERT_EQ(net->regMr(pair.send, into.data(), 4096, NCCL_PTR_HOST, &into_mh), ncclSuccess);
  uint64_t recv_key = 0;
  ASSERT_EQ(net->getMrKey(on_recv_mh, &recv_key), ncclSuccess);
  Pending back;
  ASSERT_EQ(net->iread(pair.send, into.data(), 4096, into_mh, address_of(on_recv.data()), recv_key,
                       &back.request),
            ncclSuccess);
  ASSERT_TRUE(wait_all(net, {&back})) << captured_logs();
  ASSERT_EQ(back.rc, ncclSuccess) << captured_logs();
  EXPECT_EQ(into, on_recv);

  for (auto [comm, mh] : {std::pair{pair.send, remote_mh},
                          {pair.recv, local_mh},
                          {pair.recv, on_recv_mh},
                          {pair.send, into_mh}}) {
    EXPECT_EQ(net->deregMr(comm, mh), ncclSuccess);
  }
  EXPECT_EQ(net->getMrKey(remote_mh, &key), ncclInvalidArgument);  // deregistered
  close_pair(pair);
}

TEST_P(NetOfiProvider, IwriteAndIwriteInlineLandInThePeersBuffer) {
  if (std::string lack = machine_lacks_rma(); !lack.empty())
    NCCOM_SKIP_MACHINE_LACKS(kLibfabricProvider) << lack;
  ASSERT_EQ(props.rma_supported, 1)
      << GetParam() << " offers RMA (fi_getinfo), the plugin does not";
  CommPair pair = connect_pair();
  ASSERT_FALSE(HasFailure());
  constexpr size_t kSize = 64 << 10;
  std::vector<uint8_t> source = pattern(kSize, 0x33);
  std::vector<uint8_t> target(kSize + 64, 0);
  void *source_mh = nullptr, *target_mh = nullptr;
  ASSERT_EQ(net->regMr(pair.send, source.data(), kSize, NCCL_PTR_HOST, &source_mh), ncclSuccess);
  ASSERT_EQ(net->regMr(pair.recv, target.data(), target.size(), NCCL_PTR_HOST, &target_mh),
            ncclSuccess);
  uint64_t key = 0;
  ASSERT_EQ(net->getMrKey(target_mh, &key), ncclSuccess);

  Pending write;
  ASSERT_EQ(net->iwrite(pair.send, source.data(), kSize, source_mh, address_of(target.data()), key,
                        &write.request),
            ncclSuccess)
      << captured_logs();
  ASSERT_TRUE(wait_all(net, {&write})) << captured_logs();
  ASSERT_EQ(write.rc, ncclSuccess) << captured_logs();
  EXPECT_TRUE(progress_until(net, pair.recv, [&] {
    return std::memcmp(target.data(), source.data(), kSize) == 0;
  })) << captured_logs();

  const size_t inline_size = props.max_write_inline_size;
  if (inline_size >= 8) {
    uint64_t word = 0x0123456789ABCDEFull;
    void* request = nullptr;
    ASSERT_EQ(net->iwriteInline(pair.send, &word, 8, address_of(&target[kSize]), key, &request),
              ncclSuccess)
        << captured_logs();
    ASSERT_NE(request, nullptr);
    int done = 0;
    EXPECT_EQ(net->test(request, &done, nullptr), ncclSuccess);
    EXPECT_EQ(done, 1) << "an inline write completes when the provider takes it";
    EXPECT_TRUE(progress_until(net, pair.recv, [&] {
      uint64_t landed = 0;
      std::memcpy(&landed, &target[kSize], 8);
      return landed == word;
    })) << captured_logs();
  }
  void* request = nullptr;
  std::vector<uint8_t> too_big(inline_size + 1);
  EXPECT_EQ(net->iwriteInline(pair.send, too_big.data(), too_big.size(), address_of(target.data()),
                              key, &request),
            ncclInvalidArgument);
  EXPECT_EQ(net->deregMr(pair.send, source_mh), ncclSuccess);
  EXPECT_EQ(net->deregMr(pair.recv, target_mh), ncclSuccess);
  close_pair(pair);
}

TEST_P(NetOfiProvider, RegMrRejectsDeviceMemoryAndBadInput) {
  CommPair pair = connect_pair();
  ASSERT_FALSE(HasFailure());
  char buf[256];
  void* mh = nullptr;
  EXPECT_EQ(net->regMr(pair.send, buf, sizeof buf, NCCL_PTR_NEURON, &mh), ncclInvalidArgument);
  EXPECT_TRUE(logs_contain("no Neuron device memory on this host")) << captured_logs();
  EXPECT_EQ(net->regMr(pair.send, buf, sizeof buf, 0x40, &mh), ncclInvalidArgument);
  EXPECT_EQ(net->regMr(pair.send, nullptr, sizeof buf, NCCL_PTR_HOST, &mh), ncclInvalidArgument);
  EXPECT_EQ(net->regMr(pair.listen, buf, sizeof buf, NCCL_PTR_HOST, &mh), ncclInvalidArgument);
  EXPECT_EQ(net->regMr(buf, buf, sizeof buf, NCCL_PTR_HOST, &mh), ncclInvalidArgument);
  EXPECT_EQ(net->regMrDmaBuf(pair.send, buf, sizeof buf, NCCL_PTR_HOST, 0, 3, &mh),
            ncclInvalidUsage);
  EXPECT_EQ(mh, nullptr);

  ASSERT_EQ(net->regMrDmaBuf(pair.send, buf, sizeof buf, NCCL_PTR_HOST, 0, -1, &mh), ncclSuccess);
  uint64_t key = 0;
  EXPECT_EQ(net->getMrKey(buf, &key), ncclInvalidArgument);
  EXPECT_EQ(net->getMrKey(mh, nullptr), ncclInvalidArgument);
  // A registration belongs to its comm.
  EXPECT_EQ(net->deregMr(pair.recv, mh), ncclInvalidArgument);
  void* request = nullptr;
  EXPECT_EQ(net->isend(pair.send, buf, sizeof buf + 1, 0, mh, &request), ncclInvalidArgument)
      << "a buffer beyond its registration";
  EXPECT_EQ(net->deregMr(pair.send, mh), ncclSuccess);
  EXPECT_EQ(net->deregMr(pair.send, mh), ncclInvalidArgument);
  close_pair(pair);
}

}  // namespace
}  // namespace net_ofi_test
