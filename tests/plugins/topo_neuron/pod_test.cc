// Suite NeuronPod: inter-node ordering inside UltraServer pods.
#include "topo_neuron/pod.h"

#include <gtest/gtest.h>

namespace nccom::topo_neuron {
namespace {

TEST(NeuronPod, GeometryPerPlatform) {
  EXPECT_EQ(podGeometry(Variant::Trn2UltraServer).layout, PodLayout::Ring);
  EXPECT_EQ(podGeometry(Variant::Trn2UltraServer).podNodes, 4);
  EXPECT_EQ(podGeometry(Variant::Trn3SwitchV1).layout, PodLayout::AllToAll);
  const PodGeometry ring{PodLayout::Ring, 4};
  EXPECT_TRUE(podNeighbours(ring, 0, 3));
  EXPECT_TRUE(podNeighbours(ring, 2, 1));
  EXPECT_FALSE(podNeighbours(ring, 0, 2));
  EXPECT_FALSE(podNeighbours(ring, 1, 1));
}

TEST(NeuronPod, FullUltraServerFollowsItsRing) {
  // Nodes listed out of order; positions 0-1-2-3-0 are the Z ring.
  std::vector<PodNode> nodes = {{10, 0, 2}, {11, 0, 0}, {12, 0, 3}, {13, 0, 1}};
  auto o = podNodeOrder(nodes, {PodLayout::Ring, 4});
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(*o, (std::vector<int>{11, 13, 10, 12}));  // positions 0, 1, 2, 3
}

TEST(NeuronPod, PartialPodPrefersNeighbourPath) {
  // Positions 0, 2, 3 of a 4-ring: 0-3-2 is a neighbour path (0-3 wraps),
  // 0-2 is not a neighbour pair, so ascending order would be worse.
  std::vector<PodNode> nodes = {{0, 0, 0}, {1, 0, 2}, {2, 0, 3}};
  auto o = podNodeOrder(nodes, {PodLayout::Ring, 4});
  ASSERT_TRUE(o);
  EXPECT_EQ(*o, (std::vector<int>{0, 2, 1}));
}

TEST(NeuronPod, NoNeighbourPathFallsBackToPositions) {
  std::vector<PodNode> nodes = {{5, 0, 2}, {4, 0, 0}};
  auto o = podNodeOrder(nodes, {PodLayout::Ring, 4});
  ASSERT_TRUE(o);
  EXPECT_EQ(*o, (std::vector<int>{4, 5}));
}

TEST(NeuronPod, PodsInIdOrderEachOrderedInside) {
  std::vector<PodNode> nodes = {{0, 7, 1}, {1, 3, 0}, {2, 7, 0}, {3, 3, 1}};
  auto o = podNodeOrder(nodes, {PodLayout::Ring, 4});
  ASSERT_TRUE(o);
  EXPECT_EQ(*o, (std::vector<int>{1, 3, 2, 0}));
}

TEST(NeuronPod, SwitchPodIsAnyOrderSoAscending) {
  std::vector<PodNode> nodes = {{0, 0, 8}, {1, 0, 3}, {2, 0, 5}};
  auto o = podNodeOrder(nodes, podGeometry(Variant::Trn3SwitchV1));
  ASSERT_TRUE(o);
  EXPECT_EQ(*o, (std::vector<int>{1, 2, 0}));
}

TEST(NeuronPod, Errors) {
  auto a = podNodeOrder({{0, 0, 4}}, {PodLayout::Ring, 4});
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().message.find("podNodeId 4, outside a pod of 4"), std::string::npos);
  auto b = podNodeOrder({{0, 0, 1}, {1, 0, 1}}, {PodLayout::Ring, 4});
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("both claim position 1 of pod 0"), std::string::npos);
  EXPECT_FALSE(podNodeOrder({}, {PodLayout::Ring, 0}));
  EXPECT_FALSE(podNodeOrder({}, {PodLayout::AllToAll, 65}));
}

TEST(NeuronPod, LargestPodIsBounded) {
  // 64 positions of a ring with every other one missing: no neighbour path
  // exists, the bounded search gives up and falls back to positions.
  std::vector<PodNode> nodes;
  for (int i = 0; i < 64; i += 2) nodes.push_back({i, 0, i});
  auto o = podNodeOrder(nodes, {PodLayout::Ring, 64});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->size(), 32u);
  EXPECT_EQ(o->front(), 0);
  EXPECT_EQ(o->back(), 62);
}

}  // namespace
}  // namespace nccom::topo_neuron
