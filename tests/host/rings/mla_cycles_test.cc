// GraphMlaCycles: the MLA blocks of each ring (our design, docs/decisions/rings.md).
// Rings come from the real preset/postset path over hand-made graphs.
#include "rings/mla_cycles.h"

#include "synthetic.h"

#include <gtest/gtest.h>

namespace nccom::rings {
namespace {

using test::Cluster;
using test::IntraOrder;
using test::Numbering;

Rings ringsOf(const Cluster& cl, int rank) {
  const auto frags = test::gatherFragments(cl);
  auto r = postset(test::inputFor(cl, frags, rank, {}));
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? *r : Rings{};
}

// Two NeuronCores per MLA: mla_idx = local index / 2.
std::vector<int> mlaPairs(const Cluster& cl) {
  std::vector<int> m(cl.nRanks);
  for (int r = 0; r < cl.nRanks; ++r) m[r] = cl.localIndex[r] / 2;
  return m;
}

// One node, ranks 0..3 with MLAs 0 0 1 1, channel 0 ordered as `order`.
Cluster oneNode(std::vector<int> order) {
  Cluster cl = test::makeCluster(1, 4, 1, Numbering::Blocked, IntraOrder::Identity);
  cl.graphs[0].intra = std::move(order);
  return cl;
}

TEST(GraphMlaCycles, SingleNodeBlockMayWrapAroundTheRing) {
  // Ring 0 2 3 1: MLAs 0 1 1 0, and the last 0 joins the first.
  const Cluster cl = oneNode({0, 2, 3, 1});
  auto m0 = buildMlaCycles(ringsOf(cl, 0), 0, mlaPairs(cl), cl.rankNode);
  ASSERT_TRUE(m0.ok()) << m0.error().message;
  EXPECT_EQ(m0->nMlaInCycle, 2);
  EXPECT_EQ(m0->cycles, (std::vector<std::vector<int>>{{0, 1}, {0, 1}}));  // doubled channel too
  EXPECT_TRUE(m0->violations.empty());
  EXPECT_TRUE(checkMlaContiguity(*m0).ok());
  EXPECT_EQ(mlaCyclesLogLine(*m0), "built 2 mla cycles");
  // Rank 3 (MLA 1) reads the same cycle from its own MLA.
  auto m3 = buildMlaCycles(ringsOf(cl, 3), 3, mlaPairs(cl), cl.rankNode);
  ASSERT_TRUE(m3.ok());
  EXPECT_EQ(m3->cycles[0], (std::vector<int>{1, 0}));
}

TEST(GraphMlaCycles, InterleavedMlasAreViolations) {
  // Ring 1 2 0 3: MLAs 0 1 0 1. From rank 0: 0 3 1 2.
  const Cluster cl = oneNode({1, 2, 0, 3});
  auto m = buildMlaCycles(ringsOf(cl, 0), 0, mlaPairs(cl), cl.rankNode);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->cycles[0], (std::vector<int>{0, 1, 0, 1}));
  ASSERT_EQ(m->violations.size(), 4u);  // MLA 0 and MLA 1, on both channels
  EXPECT_EQ(m->violations[0].message(),
            "ring 0 enters MLA 0 of node 0 twice (block at rank 0, again at rank 1): "
            "an MLA must be one contiguous block of the ring");
  EXPECT_EQ(m->violations[1].mla, 1);
  EXPECT_EQ(m->violations[1].firstRank, 3);
  EXPECT_EQ(m->violations[1].againRank, 2);
  EXPECT_EQ(m->violations[2].channel, 1);
  auto err = checkMlaContiguity(*m);
  ASSERT_FALSE(err.ok());
  EXPECT_CONTAINS(err.error().message, "ring 0 enters MLA 0 of node 0 twice");
  EXPECT_CONTAINS(err.error().message, "(4 violation(s) in all)");
}

TEST(GraphMlaCycles, MultiNodeSegmentDoesNotWrap) {
  // Node 0 orders 0 2 3 1 (MLAs 0 1 1 0); node 1 is 4 5 6 7. The ring
  // 0 2 3 1 4 5 6 7 leaves MLA 0 of node 0 and comes back to it.
  Cluster cl = test::makeCluster(2, 4, 1, Numbering::Blocked, IntraOrder::Identity);
  cl.graphs[0].intra = {0, 2, 3, 1};
  auto m0 = buildMlaCycles(ringsOf(cl, 0), 0, mlaPairs(cl), cl.rankNode);
  ASSERT_TRUE(m0.ok());
  ASSERT_EQ(m0->violations.size(), 2u);  // channel 0 and its copy
  EXPECT_EQ(m0->violations[0].node, 0);
  EXPECT_EQ(m0->violations[0].mla, 0);
  EXPECT_EQ(m0->violations[0].firstRank, 0);
  EXPECT_EQ(m0->violations[0].againRank, 1);
  EXPECT_EQ(m0->cycles[0], (std::vector<int>{0, 1}));  // the node's own view closes the cycle
  auto m4 = buildMlaCycles(ringsOf(cl, 4), 4, mlaPairs(cl), cl.rankNode);
  ASSERT_TRUE(m4.ok());
  EXPECT_EQ(m4->cycles[0], (std::vector<int>{0, 1}));
  EXPECT_EQ(m4->nMlaInCycle, 2);
}

TEST(GraphMlaCycles, IdentityAndReverseOrdersAreContiguousOnEveryRank) {
  for (IntraOrder intra : {IntraOrder::Identity, IntraOrder::Reverse}) {
    const Cluster cl = test::makeCluster(8, 8, 2, Numbering::Interleaved, intra);
    const auto frags = test::gatherFragments(cl);
    for (int r = 0; r < cl.nRanks; ++r) {
      auto rings = postset(test::inputFor(cl, frags, r, {}));
      ASSERT_TRUE(rings.ok());
      auto m = buildMlaCycles(*rings, r, mlaPairs(cl), cl.rankNode);
      ASSERT_TRUE(m.ok());
      EXPECT_TRUE(m->violations.empty()) << "rank " << r;
      EXPECT_EQ(m->nMlaInCycle, 4);
      ASSERT_EQ(m->cycles.size(), 4u);
      // From its own MLA, the node's 4 MLAs in order (identity) or reverse.
      const int mine = cl.localIndex[r] / 2;
      for (const auto& cycle : m->cycles) {
        ASSERT_EQ(cycle.size(), 4u);
        for (int i = 0; i < 4; ++i)
          EXPECT_EQ(cycle[i], intra == IntraOrder::Identity ? (mine + i) % 4 : (mine - i + 4) % 4);
      }
    }
  }
}

TEST(GraphMlaCycles, OddRotationSplitsMlaZeroOnEveryNode) {
  // Rotated: channel c starts at local (c + 1) % 8. Channel 0 (order
  // 1 2 ... 7 0) splits MLA 0 {0, 1} on every node; channel 1 (2 ... 7 0 1)
  // keeps every MLA whole. Channels 2 and 3 are their copies.
  const Cluster cl = test::makeCluster(5, 8, 2, Numbering::Blocked, IntraOrder::Rotated);
  auto m = buildMlaCycles(ringsOf(cl, 0), 0, mlaPairs(cl), cl.rankNode);
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->violations.size(), 10u);
  for (const auto& v : m->violations) {
    EXPECT_TRUE(v.channel == 0 || v.channel == 2);
    EXPECT_EQ(v.mla, 0);
  }
  // On one node the same rotation is only a different start of the cycle.
  const Cluster single = test::makeCluster(1, 8, 2, Numbering::Blocked, IntraOrder::Rotated);
  auto s = buildMlaCycles(ringsOf(single, 0), 0, mlaPairs(single), single.rankNode);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->violations.empty());
}

TEST(GraphMlaCycles, RejectsMalformedInputs) {
  const Cluster cl = oneNode({0, 1, 2, 3});
  const Rings rings = ringsOf(cl, 0);
  std::vector<int> mla = mlaPairs(cl);
  EXPECT_CONTAINS(buildMlaCycles(rings, 0, std::vector<int>(3, 0), cl.rankNode).error().message,
                  "3 mla_idx and 4 node entries");
  mla[2] = -1;
  EXPECT_CONTAINS(buildMlaCycles(rings, 0, mla, cl.rankNode).error().message,
                  "rank 2 has mla_idx -1");
  EXPECT_CONTAINS(buildMlaCycles(rings, 4, mlaPairs(cl), cl.rankNode).error().message,
                  "myRank 4 outside [0, 4)");
  // Rings of rank 0 passed as rank 1's.
  EXPECT_CONTAINS(buildMlaCycles(rings, 1, mlaPairs(cl), cl.rankNode).error().message,
                  "channel 0's userRanks are not a ring of 4 ranks starting at rank 1");
}

}  // namespace
}  // namespace nccom::rings
