// NetOfiProvider: isend never blocks. A fast stream of small sends with no
// receive posted fills the provider (with tcp;ofi_rxm, libfabric 1.17 could
// block inside fi_tsend); the plugin must answer with NULL requests (retry
// later) instead, and every message accepted must still arrive, in order,
// once receives are posted.
//
// A watchdog thread bounds the whole case: if the main thread is stuck inside
// the provider it cannot be unwound, so the watchdog reports where it was and
// ends the process with a failure rather than letting ctest wait.
#include "net_ofi_fixture.h"

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>

namespace net_ofi_test {
namespace {

using Clock = std::chrono::steady_clock;

class Watchdog {
 public:
  Watchdog(std::chrono::seconds bound, const char* what) : what_(what) {
    thread_ = std::thread([this, bound] {
      std::unique_lock lock(mutex_);
      if (cv_.wait_for(lock, bound, [this] { return finished_; })) return;
      std::fprintf(stderr,
                   "FAILED (watchdog): %s did not finish within %llds; the main thread is stuck "
                   "in phase \"%s\" after %d messages\n",
                   what_, static_cast<long long>(bound.count()), phase_.load(), count_.load());
      std::fflush(stderr);
      std::_Exit(1);
    });
  }
  ~Watchdog() {
    {
      std::lock_guard lock(mutex_);
      finished_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void at(const char* phase, int count) {
    phase_.store(phase);
    count_.store(count);
  }

 private:
  const char* what_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool finished_ = false;
  std::atomic<const char*> phase_{"start"};
  std::atomic<int> count_{0};
  std::thread thread_;
};

// Tests the sends still pending, dropping those done; a failed send fails
// the test.
void progress_sends(const ncclNet_v6_t* net, std::deque<void*>* sends) {
  for (auto it = sends->begin(); it != sends->end();) {
    int done = 0;
    ncclResult_t rc = net->test(*it, &done, nullptr);
    EXPECT_EQ(rc, ncclSuccess);
    if (rc != ncclSuccess || done) {
      it = sends->erase(it);
    } else {
      ++it;
    }
  }
}

TEST_P(NetOfiProvider, SmallSendStreamWithoutReceivesNeverBlocks) {
  Watchdog watchdog(std::chrono::seconds(40), "the small-send stream");
  CommPair pair = connect_pair();
  ASSERT_FALSE(HasFailure());

  // 2 KiB eager messages: a few thousand fill the socket buffers of an idle
  // peer, so the stream meets back-pressure well before it ends.
  constexpr int kMessages = 30000;
  constexpr int kSize = 2048;
  constexpr int kMaxRefusalsInARow = 2000;  // back-pressure that persists ends the stream
  // Generous: the machine is shared; a blocked call is caught by the watchdog.
  constexpr auto kCallBound = std::chrono::seconds(2);
  constexpr int kWords = kSize / sizeof(uint64_t);
  std::vector<uint64_t> values(static_cast<size_t>(kMessages) * kWords);
  for (int i = 0; i < kMessages; ++i) values[static_cast<size_t>(i) * kWords] = 0x5eed0000ull + i;
  const int tag = 11;

  std::deque<void*> sends;
  int accepted = 0;
  int refusals_in_a_row = 0;
  int refused = 0;
  auto slowest = Clock::duration::zero();
  while (accepted < kMessages && refusals_in_a_row < kMaxRefusalsInARow) {
    watchdog.at("isend", accepted);
    void* request = nullptr;
    const auto start = Clock::now();
    ASSERT_EQ(net->isend(pair.send, &values[static_cast<size_t>(accepted) * kWords], kSize, tag,
                         nullptr, &request),
              ncclSuccess)
        << captured_logs();
    slowest = std::max(slowest, Clock::now() - start);
    if (request != nullptr) {
      sends.push_back(request);
      ++accepted;
      refusals_in_a_row = 0;
    } else {
      ++refused;
      ++refusals_in_a_row;
    }
    watchdog.at("test of the pending sends", accepted);
    progress_sends(net, &sends);
    ASSERT_FALSE(HasFailure()) << captured_logs();
  }
  EXPECT_LT(slowest, kCallBound)
      << "an isend call took "
      << std::chrono::duration_cast<std::chrono::milliseconds>(slowest).count() << " ms";
  RecordProperty("accepted", accepted);
  RecordProperty("refused", refused);
  ASSERT_GT(accepted, 0);
  EXPECT_GT(refused, 0) << "the stream never met back-pressure: the case tests nothing";

  // Now receive everything that was accepted, in order, while the remaining
  // sends complete.
  std::vector<uint64_t> received(static_cast<size_t>(accepted) * kWords, 0);
  std::deque<std::pair<void*, int>> recvs;  // request, message index
  int posted = 0, arrived = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while ((arrived < accepted || !sends.empty()) && Clock::now() < deadline) {
    watchdog.at("receiving", arrived);
    while (posted < accepted && recvs.size() < NCCL_NET_MAX_REQUESTS) {
      void* buf = &received[static_cast<size_t>(posted) * kWords];
      int rsize = kSize;
      int rtag = tag;
      void* request = nullptr;
      ASSERT_EQ(net->irecv(pair.recv, 1, &buf, &rsize, &rtag, nullptr, &request), ncclSuccess);
      if (request == nullptr) break;
      recvs.emplace_back(request, posted++);
    }
    for (auto it = recvs.begin(); it != recvs.end();) {
      int done = 0, got = -1;
      ASSERT_EQ(net->test(it->first, &done, &got), ncclSuccess) << captured_logs();
      if (!done) {
        ++it;
        continue;
      }
      EXPECT_EQ(got, kSize);
      ++arrived;
      it = recvs.erase(it);
    }
    progress_sends(net, &sends);
    ASSERT_FALSE(HasFailure()) << captured_logs();
  }
  ASSERT_EQ(arrived, accepted) << "messages lost after back-pressure\n" << captured_logs();
  EXPECT_TRUE(sends.empty()) << sends.size() << " sends never completed";
  for (size_t i = 0; i < static_cast<size_t>(accepted) * kWords; i += kWords) {
    ASSERT_EQ(received[i], values[i]) << "message " << i / kWords << " out of order or corrupted";
  }
  close_pair(pair);
}

}  // namespace
}  // namespace net_ofi_test
