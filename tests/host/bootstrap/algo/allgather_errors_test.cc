// Invalid calls are refused before any traffic; a transport failure comes
// back with its status and the algorithm, round and peers in front.
#include "gather_runner.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace nccom::bootstrap::testing {
namespace {

using A = AllGatherAlgorithm;

// Single-threaded stand-in: every call succeeds without moving data, except
// call number `fail_at`, which returns `failure`.
class ScriptedExchange : public PeerExchange {
 public:
  Status exchange(int send_to, const void*, std::size_t send_size, int recv_from, void*,
                  std::size_t recv_size, MsgType type) override {
    calls.push_back(
        {static_cast<int>(calls.size()), -1, send_to, send_size, recv_from, recv_size, type});
    if (static_cast<int>(calls.size()) - 1 == fail_at) return failure;
    return {};
  }
  int fail_at = -1;
  Error failure;
  std::vector<ExchangeRecord> calls;
};

Error gather_error(PeerExchange& transport, int rank, int n, void* data, std::size_t size,
                   A algorithm) {
  Status status = all_gather(transport, rank, n, data, size, algorithm);
  if (status) return Error{NRT_SUCCESS, "(succeeded)"};
  return status.take_error();
}

TEST(BootstrapAllGatherErrors, InvalidArgumentsAreRefusedWithoutTraffic) {
  ScriptedExchange transport;
  std::vector<uint8_t> buffer(6 * 8);
  struct Row {
    int rank, nranks;
    void* data;
    std::size_t size;
    A algorithm;
    const char* message;
  };
  const Row rows[] = {
      {-1, 4, buffer.data(), 8, A::kRing, "all-gather (ring): rank -1 outside [0, 4)"},
      {4, 4, buffer.data(), 8, A::kBruck, "all-gather (bruck): rank 4 outside [0, 4)"},
      {0, 0, buffer.data(), 8, A::kRing, "all-gather (ring): nranks 0 must be >= 1"},
      {0, 6, buffer.data(), 8, A::kRecursiveDoubling,
       "all-gather (recursive doubling): needs a power-of-two number of ranks, got 6"},
      {1, 3, nullptr, 8, A::kBruck, "all-gather (bruck): null buffer for 8 bytes per rank"},
      {0, 2, buffer.data(), std::numeric_limits<std::size_t>::max() / 2 + 1, A::kRing,
       "all-gather (ring): 2 x 9223372036854775808 bytes overflows size_t"},
  };
  for (const Row& row : rows) {
    Error error = gather_error(transport, row.rank, row.nranks, row.data, row.size, row.algorithm);
    EXPECT_EQ(error.status, NRT_INVALID) << row.message;
    EXPECT_EQ(error.message, row.message);
  }
  EXPECT_TRUE(transport.calls.empty());
}

TEST(BootstrapAllGatherErrors, SingleRankNeverTouchesTheTransport) {
  ScriptedExchange transport;
  uint8_t byte = 42;
  for (A algorithm : {A::kRing, A::kRecursiveDoubling, A::kBruck}) {
    EXPECT_TRUE(all_gather(transport, 0, 1, &byte, 1, algorithm).ok());
    EXPECT_TRUE(all_gather(transport, 0, 1, nullptr, 0, algorithm).ok());
  }
  EXPECT_TRUE(transport.calls.empty());
  EXPECT_EQ(byte, 42);
}

TEST(BootstrapAllGatherErrors, EmptySlicesWithNoBufferAreValid) {
  for (A algorithm : {A::kRing, A::kRecursiveDoubling, A::kBruck}) {
    ScriptedExchange transport;
    EXPECT_TRUE(all_gather(transport, 3, 8, nullptr, 0, algorithm).ok());
    EXPECT_EQ(static_cast<int>(transport.calls.size()), algorithm_rounds(algorithm, 8));
    for (const auto& call : transport.calls) EXPECT_EQ(call.send_bytes + call.recv_bytes, 0u);
  }
}

TEST(BootstrapAllGatherErrors, TransportFailureNamesAlgorithmRoundAndPeers) {
  struct Row {
    A algorithm;
    int rank, nranks, fail_round;
    const char* message;
  };
  const Row rows[] = {
      {A::kRing, 2, 5, 3, "peer did not answer (all-gather (ring) round 3 with ranks 3/1)"},
      {A::kRecursiveDoubling, 5, 8, 2,
       "peer did not answer (all-gather (recursive doubling) round 2 with ranks 1/1)"},
      {A::kBruck, 5, 9, 2, "peer did not answer (all-gather (bruck) round 2 with ranks 1/0)"},
      {A::kBruck, 0, 9, 3, "peer did not answer (all-gather (bruck) round 3 with ranks 1/8)"},
  };
  for (const Row& row : rows) {
    ScriptedExchange transport;
    transport.fail_at = row.fail_round;
    transport.failure = make_error(NRT_TIMEOUT, "peer did not answer");
    std::vector<uint8_t> buffer(static_cast<std::size_t>(row.nranks) * 17);
    Error error = gather_error(transport, row.rank, row.nranks, buffer.data(), 17, row.algorithm);
    EXPECT_EQ(error.status, NRT_TIMEOUT) << row.message;
    EXPECT_EQ(error.message, row.message);
    EXPECT_EQ(static_cast<int>(transport.calls.size()), row.fail_round + 1)
        << "no round after the failure";
  }
}

TEST(BootstrapAllGatherErrors, EveryRoundsFailureIsPropagatedWithItsStatus) {
  for (A algorithm : {A::kRing, A::kRecursiveDoubling, A::kBruck}) {
    const int n = 16;
    for (int round = 0; round < algorithm_rounds(algorithm, n); ++round) {
      ScriptedExchange transport;
      transport.fail_at = round;
      transport.failure = make_error(NRT_CLOSED, "connection closed");
      std::vector<uint8_t> buffer(n * 4);
      Error error = gather_error(transport, 6, n, buffer.data(), 4, algorithm);
      const std::string context = std::string(" (all-gather (") + algorithm_name(algorithm) +
                                  ") round " + std::to_string(round) + " with ranks ";
      EXPECT_EQ(error.status, NRT_CLOSED);
      EXPECT_EQ(error.message.rfind("connection closed" + context, 0), 0u) << error.message;
    }
  }
}

// End to end: a rank that never joins makes the others time out (no hang),
// each naming the link it was waiting on.
TEST(BootstrapAllGatherErrors, MissingRankTimesOutThroughTheSchedule) {
  InProcessNetwork network(3, std::chrono::milliseconds(100));
  std::vector<std::vector<uint8_t>> buffers(2, std::vector<uint8_t>(3 * 8));
  std::vector<Status> results(2);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank) {
    threads.emplace_back([&, rank] {
      results[rank] =
          all_gather(network.endpoint(rank), rank, 3, buffers[rank].data(), 8, A::kRing);
    });
  }
  for (auto& thread : threads) thread.join();
  ASSERT_FALSE(results[0].ok());
  EXPECT_EQ(results[0].error().status, NRT_TIMEOUT);
  EXPECT_EQ(results[0].error().message,
            "in-process rank 0: nothing from rank 2 (type 1) within 100 ms (all-gather (ring) "
            "round 0 with ranks 1/2)");
  // Rank 1 fails in round 0 too: on its send to rank 2, or on its receive
  // from rank 0 if rank 0 gave up first.
  ASSERT_FALSE(results[1].ok());
  EXPECT_EQ(results[1].error().status, NRT_TIMEOUT);
  EXPECT_EQ(results[1].error().message.rfind("in-process rank 1: ", 0), 0u)
      << results[1].error().message;
  EXPECT_NE(results[1].error().message.find(" (all-gather (ring) round 0 with ranks 2/0)"),
            std::string::npos)
      << results[1].error().message;
  EXPECT_EQ(network.undelivered(), 0u) << "a failed rank left its buffer posted";
}

}  // namespace
}  // namespace nccom::bootstrap::testing
