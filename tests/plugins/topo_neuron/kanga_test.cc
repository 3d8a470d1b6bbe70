// Suite NeuronKangaRing: kangaRing paths on Trn3 Switch-V1.
#include "topo_neuron/kanga.h"

#include <gtest/gtest.h>

#include <set>

namespace nccom::topo_neuron {
namespace {

TEST(NeuronKangaRing, RotatePathIsACyclicShift) {
  const std::vector<int> p = {1, 2, 3, 4, 5};
  EXPECT_EQ(rotatePath(p, 0), p);
  EXPECT_EQ(rotatePath(p, 2), (std::vector<int>{3, 4, 5, 1, 2}));
  EXPECT_EQ(rotatePath(p, 7), (std::vector<int>{3, 4, 5, 1, 2}));
  EXPECT_EQ(rotatePath(p, -1), (std::vector<int>{5, 1, 2, 3, 4}));
  EXPECT_TRUE(rotatePath({}, 3).empty());
}

TEST(NeuronKangaRing, MoreThanFourPathsIsTheAssertError) {
  auto r = duplicatePaths({0, 1, 2, 3, 4, 5}, 5);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("paths.size() <= MAX_KANGA_PATHS"), std::string::npos);
  EXPECT_TRUE(duplicatePaths({0, 1, 2, 3}, 4));
}

TEST(NeuronKangaRing, PathsLongerThan64AreRejected) {
  std::vector<int> base(65);
  for (int i = 0; i < 65; ++i) base[static_cast<size_t>(i)] = i;
  auto r = duplicatePaths(base, 1);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("65 entries exceeds 64"), std::string::npos);
  EXPECT_FALSE(duplicatePaths({}, 1));
  EXPECT_FALSE(duplicatePaths({1}, 0));
}

TEST(NeuronKangaRing, SwitchV1NodeGivesFourDistinctEvenlySpacedRotations) {
  auto d = describePlatform(Variant::Trn3SwitchV1);  // 16 devices x 4 vcores = 64
  ASSERT_TRUE(d) << d.error().message;
  auto r = getPaths(*d, makeRequest(*d, firstDevices(*d, 16), 1));
  ASSERT_TRUE(r) << r.error().message;
  const auto& base = r->corePaths.front();
  ASSERT_EQ(base.size(), 64u);
  auto k = kangaRingPaths(base, 4);
  ASSERT_TRUE(k) << k.error().message;
  ASSERT_EQ(k->size(), 4u);
  std::set<std::vector<int>> distinct(k->begin(), k->end());
  EXPECT_EQ(distinct.size(), 4u);
  for (size_t lane = 0; lane < 4; ++lane) {
    EXPECT_LE((*k)[lane].size(), 64u);
    EXPECT_EQ((*k)[lane], rotatePath(base, static_cast<int>(lane) * 16));
  }
}

TEST(NeuronKangaRing, ShortRingsGetNoRepeatedRotation) {
  auto k = kangaRingPaths({7, 9}, 4);
  ASSERT_TRUE(k);
  EXPECT_EQ(*k, (PathContainer{{7, 9}, {9, 7}}));
  EXPECT_FALSE(kangaRingPaths({1, 2, 3, 4, 5, 6}, 5));
}

TEST(NeuronKangaRing, JbogIdMath) {
  const JbogGeometry g{64, 3, 3};  // 64 ranks per node, 3 nodes per jbog, 3 jbogs
  EXPECT_EQ(*switchV1JbogId(0, g), 0);
  EXPECT_EQ(*switchV1JbogId(191, g), 0);  // node 2
  EXPECT_EQ(*switchV1JbogId(192, g), 1);  // node 3
  EXPECT_EQ(*switchV1JbogId(575, g), 2);  // node 8
  auto beyond = switchV1JbogId(576, g);   // node 9
  ASSERT_FALSE(beyond);
  EXPECT_NE(beyond.error().message.find("beyond 3 jbog(s)"), std::string::npos);
  for (int count : {0, 4}) {
    auto bad = switchV1JbogId(0, {64, 3, count});
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("is not 1, 2 or 3"), std::string::npos);
  }
  EXPECT_FALSE(switchV1JbogId(-1, g));
  EXPECT_FALSE(switchV1JbogId(0, {0, 3, 3}));
  EXPECT_FALSE(switchV1CrossRack(3, g));
  EXPECT_TRUE(switchV1CrossRack(4, g));
}

}  // namespace
}  // namespace nccom::topo_neuron
