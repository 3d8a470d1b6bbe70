// Suite NeuronNicAssign: NIC per channel and filling topo::TopoGraph.
#include "topo_neuron/graph_fill.h"

#include <gtest/gtest.h>

namespace nccom::topo_neuron {
namespace {

TEST(NeuronNicAssign, RoundRobinOverNics) {
  auto inter = assignNics({3, 5}, 5);
  ASSERT_EQ(inter.size(), 5u);
  EXPECT_EQ(inter[0], (std::array<int, 2>{3, 3}));
  EXPECT_EQ(inter[1], (std::array<int, 2>{5, 5}));
  EXPECT_EQ(inter[4], (std::array<int, 2>{3, 3}));
  EXPECT_EQ(assignNics({}, 2)[1], (std::array<int, 2>{-1, -1}));
}

TEST(NeuronNicAssign, UsableNicsAreTheNearOnes) {
  auto d = describePlatform(Variant::Trn1, {16, 1, -1});  // NIC k near devices 2k, 2k+1
  EXPECT_EQ(usableNics(*d, {0, 1, 2, 3}), (std::vector<int>{0, 1}));
  EXPECT_EQ(usableNics(*d, {5}), (std::vector<int>{2}));
  auto inf = describePlatform(Variant::Inf2, {12, 1, -1});
  EXPECT_TRUE(usableNics(*inf, {0}).empty());
}

TEST(NeuronNicAssign, FillsRowsInLocalRanksWithHeadNearTheNic) {
  auto d = describePlatform(Variant::Trn1, {16, 1, -1});
  auto r = getPaths(*d, makeRequest(*d, firstDevices(*d, 4), 1));  // vcores 0..7
  ASSERT_TRUE(r) << r.error().message;
  topo::TopoGraph g;
  ASSERT_TRUE(fillTopoGraph(g, *d, *r));
  EXPECT_EQ(g.nLocal, 8);
  ASSERT_EQ(g.nChannels, 2);  // max(1 path, 2 near NICs)
  EXPECT_EQ(g.inter[0], (std::array<int, 2>{0, 0}));
  EXPECT_EQ(g.inter[1], (std::array<int, 2>{1, 1}));
  // Rank = index of the vcore in the node's (ascending) list = vcore id here.
  // Channel 1's head sits on device 2 or 3, which share NIC 1's switch.
  const int head1 = g.channel(1)[0];
  EXPECT_TRUE(head1 / 2 == 2 || head1 / 2 == 3) << head1;
  const int head0 = g.channel(0)[0];
  EXPECT_TRUE(head0 / 2 == 0 || head0 / 2 == 1) << head0;
  EXPECT_EQ(g.typeIntra, topo::PathType::NVL);
}

TEST(NeuronNicAssign, ExplicitRanksAndVcoreList) {
  auto d = describePlatform(Variant::Trn2, {16, 2, -1});
  auto r = getPaths(*d, makeRequest(*d, firstDevices(*d, 1), 1));  // vcores 0..3
  ASSERT_TRUE(r);
  topo::TopoGraph g;
  FillOptions opt{{0, 1, 2, 3}, {40, 41, 42, 43}, 1};
  ASSERT_TRUE(fillTopoGraph(g, *d, *r, opt));
  // Gray order of SEngines 0,1,3,2 -> vcores 0,1,3,2 -> ranks 40,41,43,42.
  EXPECT_EQ(g.intra, (std::vector<int>{40, 41, 43, 42}));
}

TEST(NeuronNicAssign, Errors) {
  auto d = describePlatform(Variant::Trn2, {16, 2, -1});
  auto r = getPaths(*d, makeRequest(*d, firstDevices(*d, 1), 1));
  ASSERT_TRUE(r);
  topo::TopoGraph g;
  g.nChannels = 5;
  auto a = fillTopoGraph(g, *d, *r, {{0, 1, 2}, {}, 0});
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().message.find("does not cover the node's vcores"), std::string::npos);
  EXPECT_EQ(g.nChannels, 5);  // untouched on error
  auto b = fillTopoGraph(g, *d, *r, {{}, {1, 1, 2, 3}, 0});
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("distinct"), std::string::npos);
  auto c = fillTopoGraph(g, *d, *r, {{}, {}, 33});
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("33 channels exceed 32"), std::string::npos);
  EXPECT_FALSE(fillTopoGraph(g, *d, SearchResult{}));
  // A result from a bigger platform than the description given.
  SearchResult foreign;
  foreign.corePaths = {{200, 201}};
  auto f = fillTopoGraph(g, *d, foreign);
  ASSERT_FALSE(f);
  EXPECT_NE(f.error().message.find("vcore 200 is not on platform trn2"), std::string::npos);
}

}  // namespace
}  // namespace nccom::topo_neuron
