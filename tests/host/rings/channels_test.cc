// GraphP2pChannels: ncclTopoComputeP2pChannels on hand-computed cases.
// GraphNetDev: ncclTopoGetNetDev.
#include "rings/channels.h"

#include "synthetic.h"

#include <gtest/gtest.h>

namespace nccom::rings {
namespace {

TEST(GraphP2pChannels, BitReversalAndPowersOfTwo) {
  EXPECT_EQ(reverseBits(0, 3), 0);
  EXPECT_EQ(reverseBits(1, 3), 4);  // 001 -> 100
  EXPECT_EQ(reverseBits(3, 3), 6);  // 011 -> 110
  EXPECT_EQ(reverseBits(6, 3), 3);
  EXPECT_EQ(reverseBits(1, 5), 16);
  EXPECT_EQ(reverseBits(3, 5), 24);
  EXPECT_EQ(reverseBits(5, 0), 0);
  EXPECT_EQ(nextPow2(0), 1);
  EXPECT_EQ(nextPow2(1), 1);
  EXPECT_EQ(nextPow2(6), 8);
  EXPECT_EQ(nextPow2(16), 16);
  EXPECT_EQ(nextPow2(17), 32);
}

TEST(GraphP2pChannels, NoNvlPeersUsesTheRingChannelCount) {
  auto p = computeP2pChannels(4, {}, 0);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->p2pnChannels, 4);
  EXPECT_EQ(p->p2pnChannelsPerPeer, 4);
  EXPECT_EQ(p->p2pChannels, (std::vector<int>{0, 2, 1, 3}));
  EXPECT_EQ(p->initFrom, 4);
  EXPECT_EQ(p->initTo, 4);

  auto six = computeP2pChannels(6, {}, 0);
  ASSERT_TRUE(six.ok());
  EXPECT_EQ(six->p2pnChannels, 8);
  EXPECT_EQ(six->p2pnChannelsPerPeer, 8);  // min(6) rounded up
  EXPECT_EQ(six->p2pChannels, (std::vector<int>{0, 4, 2, 6, 1, 5, 3, 7}));
  EXPECT_EQ(six->initFrom, 6);  // channels 6 and 7 need initChannel
  EXPECT_EQ(six->initTo, 8);

  auto zero = computeP2pChannels(0, {}, 0);
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(zero->p2pnChannels, 1);
  EXPECT_EQ(zero->p2pnChannelsPerPeer, 1);
  EXPECT_EQ(zero->p2pChannels, (std::vector<int>{0}));

  auto full = computeP2pChannels(32, {}, 0);
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->p2pnChannels, 32);
  EXPECT_EQ(full->p2pChannels[1], 16);
  EXPECT_EQ(full->p2pChannels[31], 31);
  EXPECT_EQ(full->p2pChannels[12], 6);  // 01100 -> 00110
}

TEST(GraphP2pChannels, NvlWidthDivisorsByCompCap) {
  EXPECT_EQ(nvlWidthDivisor(86), 12.0);
  EXPECT_EQ(nvlWidthDivisor(60), 18.0);
  EXPECT_EQ(nvlWidthDivisor(69), 18.0);
  EXPECT_EQ(nvlWidthDivisor(70), 21.0);
  EXPECT_EQ(nvlWidthDivisor(0), 21.0);
  const std::vector<float> w40 = {40.0F};
  // 40/21 = 1 -> 2 channels per peer; min(2, 6) = 2.
  EXPECT_EQ(computeP2pChannels(6, w40, 0)->p2pnChannelsPerPeer, 2);
  // 40/18 = 2 -> 4.
  EXPECT_EQ(computeP2pChannels(6, w40, 65)->p2pnChannelsPerPeer, 4);
  // 40/12 = 3 -> 6; min(6, 6) = 6 -> rounded up to 8.
  EXPECT_EQ(computeP2pChannels(6, w40, 86)->p2pnChannelsPerPeer, 8);
  // Narrow path: 10/21 = 0 -> max(1, 0) = 1 -> 2.
  EXPECT_EQ(computeP2pChannels(16, std::vector<float>{10.0F}, 0)->p2pnChannelsPerPeer, 2);
  // The minimum over all peers: 200/21 = 9 -> 18, 100/21 = 4 -> 8; min 8.
  auto p = computeP2pChannels(16, std::vector<float>{200.0F, 100.0F}, 0);
  EXPECT_EQ(p->p2pnChannelsPerPeer, 8);
  EXPECT_EQ(p->p2pnChannels, 16);
}

TEST(GraphP2pChannels, RejectsImpossibleInputs) {
  EXPECT_CONTAINS(computeP2pChannels(33, {}, 0).error().message,
                  "ring channel count 33 outside [0, 32]");
  EXPECT_CONTAINS(computeP2pChannels(-1, {}, 0).error().message, "ring channel count -1");
  EXPECT_CONTAINS(computeP2pChannels(4, std::vector<float>{1.0F, -2.0F}, 0).error().message,
                  "NVL path width [1] = -2.000000");
}

// Two channels over local ranks 3 4 5: channel 0 head 3, channel 1 head 5.
topo::TopoGraph nicGraph() {
  topo::TopoGraph g;
  g.nChannels = 2;
  g.nLocal = 3;
  g.intra = {3, 4, 5, 5, 3, 4};
  g.inter = {{10, 11}, {20, 21}};
  return g;
}

TEST(GraphNetDev, HeadUsesEntryNicOthersExitNic) {
  const auto g = nicGraph();
  EXPECT_EQ(*netDevForChannel(&g, 3, 0), 10);  // head of channel 0
  EXPECT_EQ(*netDevForChannel(&g, 4, 0), 11);
  EXPECT_EQ(*netDevForChannel(&g, 5, 0), 11);
  EXPECT_EQ(*netDevForChannel(&g, 5, 1), 20);  // head of channel 1
  EXPECT_EQ(*netDevForChannel(&g, 3, 1), 21);
  // Channel ids wrap over the graph's channels (doubled and P2P channels).
  EXPECT_EQ(*netDevForChannel(&g, 3, 2), 10);
  EXPECT_EQ(*netDevForChannel(&g, 5, 3), 20);
  EXPECT_EQ(*netDevForChannel(&g, 4, 31), 21);
}

TEST(GraphNetDev, NoGraphUsesTheLocalNetFallback) {
  auto viaFallback =
      netDevForChannel(nullptr, 4, 0, [](int rank) -> Result<int> { return rank * 100; });
  ASSERT_TRUE(viaFallback.ok());
  EXPECT_EQ(*viaFallback, 400);
  auto none = netDevForChannel(nullptr, 4, 0);
  ASSERT_FALSE(none.ok());
  EXPECT_CONTAINS(none.error().message, "no graph and no local-net fallback for rank 4");
}

TEST(GraphNetDev, RejectsBadChannelsAndGraphs) {
  const auto g = nicGraph();
  EXPECT_CONTAINS(netDevForChannel(&g, 3, -1).error().message, "channel id -1 is negative");
  auto empty = nicGraph();
  empty.nChannels = 0;
  EXPECT_FALSE(netDevForChannel(&empty, 3, 0).ok());
  auto noNics = nicGraph();
  noNics.inter.resize(1);
  EXPECT_CONTAINS(netDevForChannel(&noNics, 3, 1).error().message,
                  "graph channel 1 has no intra row or NIC pair");
}

}  // namespace
}  // namespace nccom::rings
