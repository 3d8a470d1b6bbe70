// KangaPath/*: ring_from_path (emu/engine/program.cc), how the engine turns
// a kangaRing path of nccl_comm_info_t into a lane's ring: the order kept as
// given (the lane's own rotation), and every malformed path refused with a
// message naming the entry.
#include "program.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using nrt_emu::engine::Ring;
using nrt_emu::engine::ring_from_path;

std::vector<int> padded(std::vector<int> ranks) {
  ranks.resize(64, -1);
  return ranks;
}

TEST(KangaPath, TheOrderIsKeptAsGiven) {
  const auto path = padded({1, 3, 2, 0});
  for (int rank = 0; rank < 4; ++rank) {
    Ring ring;
    ASSERT_TRUE(ring_from_path(path.data(), 64, 4, rank, &ring).ok());
    EXPECT_EQ(ring.order, (std::vector<int>{1, 3, 2, 0})) << "not rotated to the lowest rank";
    EXPECT_EQ(ring.order[static_cast<size_t>(ring.pos)], rank);
  }
  Ring ring;
  ASSERT_TRUE(ring_from_path(path.data(), 64, 4, 2, &ring).ok());
  EXPECT_EQ(ring.pos, 2);
}

TEST(KangaPath, AFullSixtyFourEntryPathNeedsNoPadding) {
  std::vector<int> path(64);
  for (int i = 0; i < 64; ++i) path[static_cast<size_t>(i)] = (i + 5) % 64;
  Ring ring;
  ASSERT_TRUE(ring_from_path(path.data(), 64, 64, 0, &ring).ok());
  EXPECT_EQ(ring.pos, 59);
}

TEST(KangaPath, MalformedPathsAreRefusedNamingTheEntry) {
  struct Case {
    std::vector<int> path;
    int rank_n;
    const char* says;
  };
  const Case cases[] = {
      {{0, 1, 4, 2}, 4, "entry 2 is rank 4, outside 0..3"},
      {{0, 1, -2, 2}, 4, "entry 2 is rank -2, outside 0..3"},
      {{0, 1, 1, 2}, 4, "entry 2 lists rank 1 twice"},
      {{0, 1, -1, 2}, 4, "entry 3 (rank 2) follows the padding at entry 2"},
      {{0, 1, 2}, 4, "the path holds 3 ranks, the communicator 4"},
      {{}, 4, "the path holds 0 ranks, the communicator 4"},
      {{1, 2, 3}, 3, "entry 2 is rank 3, outside 0..2"},
  };
  for (const Case& c : cases) {
    const auto path = padded(c.path);
    Ring ring;
    ring.order = {9};
    const auto st = ring_from_path(path.data(), 64, c.rank_n, 0, &ring);
    ASSERT_FALSE(st.ok()) << c.says;
    const std::string e = st.error().message;
    EXPECT_NE(e.find(c.says), std::string::npos) << "got: " << e;
    EXPECT_TRUE(ring.order.empty()) << c.says;
  }
  Ring ring;
  EXPECT_EQ(ring_from_path(nullptr, 64, 4, 0, &ring).error().message, "no path");
  const auto path = padded({0, 1, 2, 3});
  EXPECT_EQ(ring_from_path(path.data(), 64, 4, 7, &ring).error().message,
            "the path does not hold rank 7");
}

}  // namespace
