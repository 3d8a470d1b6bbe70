// Every algorithm x world size x slice size over the in-process transport:
// the data arrives exact, and the traffic is exactly the algorithm's.
#include "gather_runner.h"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <tuple>

namespace nccom::bootstrap::testing {
namespace {

struct Case {
  AllGatherAlgorithm algorithm;
  int nranks;
  std::size_t size;
};

// Multi-MiB slices for world sizes up to 16; the sanitizer builds instrument
// every byte moved (n^2 MiB per run), so there they stop at 4.
#ifdef NCCOM_TEST_UNDER_SANITIZER
constexpr int kLargeSliceMaxRanks = 4;
#else
constexpr int kLargeSliceMaxRanks = 16;
#endif

std::vector<Case> all_cases() {
  const int world_sizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 31, 32, 64};
  const std::size_t sizes[] = {0, 1, 17, 112, 4096, std::size_t{1} << 20};
  std::vector<Case> cases;
  for (auto algorithm : {AllGatherAlgorithm::kRing, AllGatherAlgorithm::kRecursiveDoubling,
                         AllGatherAlgorithm::kBruck}) {
    for (int n : world_sizes) {
      if (algorithm == AllGatherAlgorithm::kRecursiveDoubling && (n & (n - 1)) != 0) continue;
      for (std::size_t size : sizes) {
        if (size >= (std::size_t{1} << 20) && n > kLargeSliceMaxRanks) continue;
        cases.push_back({algorithm, n, size});
      }
    }
  }
  return cases;
}

void PrintTo(const Case& c, std::ostream* out) {
  *out << algorithm_name(c.algorithm) << ", n " << c.nranks << ", " << c.size << " bytes";
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name = algorithm_name(info.param.algorithm);
  for (char& c : name) {
    if (c == ' ') c = '_';
  }
  return name + "_n" + std::to_string(info.param.nranks) + "_s" + std::to_string(info.param.size);
}

class BootstrapAllGatherSchedule : public ::testing::TestWithParam<Case> {};

// The peers rank `rank` must use in round `round`: (send_to, recv_from).
std::pair<int, int> expected_peers(AllGatherAlgorithm algorithm, int rank, int n, int round) {
  switch (algorithm) {
    case AllGatherAlgorithm::kRing: return {(rank + 1) % n, (rank - 1 + n) % n};
    case AllGatherAlgorithm::kRecursiveDoubling: return {rank ^ (1 << round), rank ^ (1 << round)};
    case AllGatherAlgorithm::kBruck: {
      const int d = 1 << round;
      return {(rank - d + n) % n, (rank + d) % n};
    }
  }
  return {-1, -1};
}

TEST_P(BootstrapAllGatherSchedule, EveryRankGetsEverySliceWithTheAlgorithmsTraffic) {
  const auto [algorithm, n, size] = GetParam();
  InProcessNetwork network(n);
  const std::vector<uint8_t> expected = expected_buffer(n, size);
  GatherRun run = run_all_gather(network, size, algorithm, expected);

  const int rounds = algorithm_rounds(algorithm, n);
  for (int rank = 0; rank < n; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    ASSERT_TRUE(run.results[rank].ok()) << run.results[rank].error().message;
    ASSERT_TRUE(run.buffers[rank] == expected) << "gathered data differs";

    const auto& records = network.records(rank);
    ASSERT_EQ(static_cast<int>(records.size()), rounds);
    std::size_t sent = 0;
    std::size_t received = 0;
    for (const ExchangeRecord& record : records) {
      EXPECT_EQ(record.type, algorithm_msg_type(algorithm)) << "round " << record.round;
      const auto [send_to, recv_from] = expected_peers(algorithm, rank, n, record.round);
      EXPECT_EQ(record.send_to, send_to) << "round " << record.round;
      EXPECT_EQ(record.recv_from, recv_from) << "round " << record.round;
      EXPECT_EQ(record.send_bytes % (size ? size : 1), 0u);
      sent += record.send_bytes;
      received += record.recv_bytes;
    }
    // Each rank receives every other slice exactly once and, by symmetry,
    // sends as much: no algorithm moves a byte more than it needs.
    EXPECT_EQ(received, static_cast<std::size_t>(n - 1) * size);
    EXPECT_EQ(sent, static_cast<std::size_t>(n - 1) * size);
  }
  EXPECT_EQ(network.undelivered(), 0u);
}

INSTANTIATE_TEST_SUITE_P(, BootstrapAllGatherSchedule, ::testing::ValuesIn(all_cases()), case_name);

}  // namespace
}  // namespace nccom::bootstrap::testing
