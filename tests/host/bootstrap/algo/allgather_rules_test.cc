// The choices every rank must agree on: which algorithm, how many rounds,
// which message type.
#include "bootstrap/allgather.h"

#include <gtest/gtest.h>

namespace nccom::bootstrap {
namespace {

using A = AllGatherAlgorithm;

TEST(BootstrapAllGatherRules, ChooseAlgorithmTable) {
  struct Row {
    int nranks;
    std::size_t size;
    A expected;
  };
  const Row rows[] = {
      {1, 0, A::kRing},
      {2, 112, A::kRing},
      {3, 112, A::kRing},
      {4, 112, A::kRing},  // n <= 4: ring
      {5, 112, A::kBruck},
      {6, 0, A::kBruck},  // latency-bound, not 2^k
      {8, 112, A::kRecursiveDoubling},
      {16, 1, A::kRecursiveDoubling},
      {64, 112, A::kRecursiveDoubling},
      {1024, 0, A::kRecursiveDoubling},
      {13, 112, A::kBruck},
      {1000, 112, A::kBruck},
      {8, 65535, A::kRecursiveDoubling},
      {8, 65536, A::kRing},  // 64 KiB slices: ring
      {13, 65535, A::kBruck},
      {13, 65536, A::kRing},
      {64, std::size_t{1} << 20, A::kRing},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(choose_algorithm(row.nranks, row.size), row.expected)
        << "n " << row.nranks << " size " << row.size;
  }
}

TEST(BootstrapAllGatherRules, Rounds) {
  struct Row {
    int nranks;
    int ring, recursive_doubling, bruck;
  };
  const Row rows[] = {{1, 0, 0, 0},   {2, 1, 1, 1},    {3, 2, -1, 2},  {4, 3, 2, 2},
                      {5, 4, -1, 3},  {7, 6, -1, 3},   {8, 7, 3, 3},   {9, 8, -1, 4},
                      {16, 15, 4, 4}, {31, 30, -1, 5}, {32, 31, 5, 5}, {64, 63, 6, 6},
                      {65, 64, -1, 7}};
  for (const Row& row : rows) {
    EXPECT_EQ(algorithm_rounds(A::kRing, row.nranks), row.ring) << row.nranks;
    if (row.recursive_doubling >= 0) {
      EXPECT_EQ(algorithm_rounds(A::kRecursiveDoubling, row.nranks), row.recursive_doubling)
          << row.nranks;
    }
    EXPECT_EQ(algorithm_rounds(A::kBruck, row.nranks), row.bruck) << row.nranks;
  }
}

TEST(BootstrapAllGatherRules, MessageTypesAreTheSpecs) {
  EXPECT_EQ(static_cast<uint32_t>(algorithm_msg_type(A::kRing)), 1u);
  EXPECT_EQ(static_cast<uint32_t>(algorithm_msg_type(A::kRecursiveDoubling)), 7u);
  EXPECT_EQ(static_cast<uint32_t>(algorithm_msg_type(A::kBruck)), 8u);
  EXPECT_STREQ(algorithm_name(A::kRing), "ring");
  EXPECT_STREQ(algorithm_name(A::kRecursiveDoubling), "recursive doubling");
  EXPECT_STREQ(algorithm_name(A::kBruck), "bruck");
}

}  // namespace
}  // namespace nccom::bootstrap
