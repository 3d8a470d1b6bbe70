// NetOfiProvider: tagged isend/irecv/test, sizes, back-pressure, tag matching, iflush.
#include "net_ofi_fixture.h"

#include <cstring>
#include <numeric>

namespace net_ofi_test {
namespace {

std::vector<uint8_t> pattern(size_t size, uint8_t seed) {
  std::vector<uint8_t> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 12));
  return bytes;
}

TEST_P(NetOfiProvider, SendRecvSizesWithRegisteredBuffers) {
  CommPair pair = connect_pair();
  ASSERT_FALSE(HasFailure());
  constexpr int kMax = 16 << 20;
  std::vector<uint8_t> in(kMax + 64);
  void *smh = nullptr, *rmh = nullptr;
  std::vector<uint8_t> out = pattern(kMax, 1);
  ASSERT_EQ(net->regMr(pair.send, out.data(), out.size(), NCCL_PTR_HOST, &smh), ncclSuccess)
      << captured_logs();
  ASSERT_EQ(net->regMr(pair.recv, in.data(), in.size(), NCCL_PTR_HOST, &rmh), ncclSuccess)
      << captured_logs();
  int tag = 0;
  for (int size : {0, 8, 4096, 1 << 20, kMax}) {
    SCOPED_TRACE("size " + std::to_string(size));
    std::vector<uint8_t> expected = pattern(size, static_cast<uint8_t>(size));
    if (size > 0) std::memcpy(out.data(), expected.data(), size);
    std::memset(in.data(), 0xEE, in.size());
    // Post a receive larger than the message: the size comes from the completion.
    int got = send_recv(pair, out.data(), size, smh, in.data(), size + 64, rmh, tag++);
    EXPECT_EQ(got, size);
    EXPECT_TRUE(size == 0 || std::memcmp(in.data(), expected.data(), size) == 0);
    EXPECT_EQ(in[size], 0xEE);  // nothing written past the message
  }
  EXPECT_EQ(net->deregMr(pair.send, smh), ncclSuccess);
  EXPECT_EQ(net->deregMr(pair.recv, rmh), ncclSuccess);
  close_pair(pair);
}

TEST_P(NetOfiProvider, At128RequestsInFlightTheNextIsNull) {
  CommPair pair = connect_pair();
  ASSERT_FALSE(HasFailure());
  constexpr int kCap = NCCL_NET_MAX_REQUESTS;
  std::vector<int> values(kCap + 1), received(kCap + 1, -1);
  std::iota(values.begin(), values.end(), 1000);
  std::vector<Pending> recvs(kCap + 1), sends(kCap + 1);
  int size = sizeof(int);
  int tag = 5;
  for (int i = 0; i < kCap; ++i) {
    void* buf = &received[i];
    ASSERT_EQ(net->irecv(pair.recv, 1, &buf, &size, &tag, nullptr, &recvs[i].request), ncclSuccess);
    ASSERT_NE(recvs[i].request, nullptr) << "receive " << i;
  }
  void* buf = &received[kCap];
  void* extra = reinterpret_cast<void*>(0x1);
  ASSERT_EQ(net->irecv(pair.recv, 1, &buf, &size, &tag, nullptr, &extra), ncclSuccess);
  EXPECT_EQ(extra, nullptr) << "the 129th receive must be refused with a NULL request";
  for (int i = 0; i < kCap; ++i) {
    ASSERT_EQ(net->isend(pair.send, &values[i], size, tag, nullptr, &sends[i].request),
              ncclSuccess);
    ASSERT_NE(sends[i].request, nullptr) << "send " << i;
  }
  ASSERT_EQ(net->isend(pair.send, &values[kCap], size, tag, nullptr, &extra), ncclSuccess);
  EXPECT_EQ(extra, nullptr) << "the 129th send must be refused with a NULL request";

  std::vector<Pending*> all;
  for (int i = 0; i < kCap; ++i) all.insert(all.end(), {&sends[i], &recvs[i]});
  ASSERT_TRUE(wait_all(net, all)) << captured_logs();
  for (int i = 0; i < kCap; ++i) {
    EXPECT_EQ(recvs[i].rc, ncclSuccess);
    EXPECT_EQ(received[i], 1000 + i) << "same-tag messages arrive in order";
  }
  // Slots are free again.
  int got = send_recv(pair, &values[kCap], size, nullptr, &received[kCap], size, nullptr, tag);
  EXPECT_EQ(got, size);
  EXPECT_EQ(received[kCap], 1000 + kCap);
  close_pair(pair);
}

TEST_P(NetOfiProvider, ReceivesMatchByTag) {
  CommPair pair = connect_pair();
  ASSERT_FALSE(HasFailure());
  uint32_t seven = 7, three = 3, got7 = 0, got3 = 0;
  Pending r7, r3, s3, s7;
  int size = sizeof(uint32_t);
  void* b7 = &got7;
  void* b3 = &got3;
  int t7 = 7, t3 = 3;
  ASSERT_EQ(net->irecv(pair.recv, 1, &b7, &size, &t7, nullptr, &r7.request), ncclSuccess);
  ASSERT_EQ(net->irecv(pair.recv, 1, &b3, &size, &t3, nullptr, &r3.request), ncclSuccess);
  ASSERT_EQ(net->isend(pair.send, &three, size, 3, nullptr, &s3.request), ncclSuccess);
  ASSERT_EQ(net->isend(pair.send, &seven, size, 7, nullptr, &s7.request), ncclSuccess);
  ASSERT_TRUE(wait_all(net, {&r7, &r3, &s3, &s7})) << captured_logs();
  EXPECT_EQ(got7, 7u);
  EXPECT_EQ(got3, 3u);
  // Tags use all 32 bits, negative ones included.
  int64_t big = -1;
  int64_t got_big = 0;
  EXPECT_EQ(send_recv(pair, &big, sizeof big, nullptr, &got_big, sizeof got_big, nullptr, -2),
            static_cast<int>(sizeof big));
  EXPECT_EQ(got_big, -1);
  close_pair(pair);
}

TEST_P(NetOfiProvider, IflushOnHostMemoryCompletesAtOnce) {
  CommPair pair = connect_pair();
  ASSERT_FALSE(HasFailure());
  char buf[64];
  void* mh = nullptr;
  ASSERT_EQ(net->regMr(pair.recv, buf, sizeof buf, NCCL_PTR_HOST, &mh), ncclSuccess);
  void* data = buf;
  int size = sizeof buf;
  void* request = nullptr;
  ASSERT_EQ(net->iflush(pair.recv, 1, &data, &size, &mh, &request), ncclSuccess);
  ASSERT_NE(request, nullptr);
  int done = 0;
  EXPECT_EQ(net->test(request, &done, nullptr), ncclSuccess);
  EXPECT_EQ(done, 1);
  EXPECT_EQ(net->iflush(pair.recv, 2, &data, &size, &mh, &request), ncclInvalidArgument);
  EXPECT_EQ(net->deregMr(pair.recv, mh), ncclSuccess);
  close_pair(pair);
}

}  // namespace
}  // namespace net_ofi_test
