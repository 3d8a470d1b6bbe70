// TopoNcclOldSearch: the inherited OLD search over hand-written systems.
// Every expected value below is derived by hand from the fixture (widths
// from sdk/topo's tables: PCIe gen4 x16 = 24 GB/s, gen3 x16 = 12, Skylake
// SYS = 9, NET 100 Gb/s = 12.5, fast link count 2 at sm 70 = 42) and the
// rules of upstream ncclTopoCompute's descent; none is copied from a run.
#include "ring_search.h"
#include "search_test_util.h"

#include <chrono>
#include <cstring>
#include <map>
#include <set>
#include <utility>

namespace topo_nccl_test {
namespace {

using nccom::topo::NodeType;
using nccom::topo::PathType;
using nccom::topo::TopoGraph;
using nccom::topo::TopoSystem;
using namespace nccom::topo_nccl;

SearchOutcome mustSearch(const TopoSystem& sys, LogLines& log, const SearchRequest& req = {},
                         const SearchBudgets& budgets = {}) {
  auto r = oldSearch(sys, req, budgets);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? std::move(*r) : SearchOutcome{};
}

std::vector<int> row(const TopoGraph& g, int c) { return {g.channel(c), g.channel(c) + g.nLocal}; }

TEST(TopoNcclOldSearch, SpeedTiersAreByteExact) {
  // IEEE-754 single-precision encodings of 42, 30, ..., 2.4, 1.2, 0.24, 0.12.
  const uint32_t bits[18] = {0x42280000, 0x41f00000, 0x41c00000, 0x41a80000, 0x41900000,
                             0x41700000, 0x41400000, 0x41200000, 0x41100000, 0x40e00000,
                             0x40c00000, 0x40a00000, 0x40800000, 0x40400000, 0x4019999a,
                             0x3f99999a, 0x3e75c28f, 0x3df5c28f};
  ASSERT_EQ(sizeof(kSpeedTiers), sizeof(bits));
  EXPECT_EQ(std::memcmp(kSpeedTiers.data(), bits, sizeof(bits)), 0);
  EXPECT_EQ(kGlobalBudget, 1572864);
  EXPECT_EQ(kAttemptBudget, 262144);
  EXPECT_EQ(kSameChannelsBudget, 1024);
  EXPECT_EQ(kDuplicateFloor, 25.0F);
}

TEST(TopoNcclOldSearch, SeedIsTheFirstTierTheWidestPathCarries) {
  EXPECT_EQ(seedTier(5000.0F), 0);  // one GPU, no NET: kLocWidth
  EXPECT_EQ(seedTier(42.0F), 0);
  EXPECT_EQ(seedTier(41.9F), 1);  // 30
  EXPECT_EQ(seedTier(24.0F), 2);
  EXPECT_EQ(seedTier(12.0F), 6);
  EXPECT_EQ(seedTier(0.2F), 17);  // 0.12
  EXPECT_EQ(seedTier(0.0F), 17);  // nothing fits: the last tier
}

TEST(TopoNcclOldSearch, OneGpuFillsEveryChannelAtTheTopTier) {
  // One GPU, no NET: maxWidth = 5000, seed 42, the ring of one closes on
  // itself without using a link, so the first attempt reaches maxChannels
  // (optimal). 42 >= 25 asks for doubling, but min(2 x 16, 16) = 16: none.
  const TopoSystem sys = searchSystem("one_gpu.xml", share({3}, 1, 1));
  LogLines log;
  const auto out = mustSearch(sys, log);
  expectValidRings(sys, out.graph);
  EXPECT_EQ(out.graph.nChannels, 16);
  for (int c = 0; c < 16; ++c) EXPECT_EQ(row(out.graph, c), std::vector<int>{3});
  EXPECT_EQ(out.graph.speedIntra, 42.0F);
  EXPECT_EQ(out.graph.speedInter, 42.0F);
  EXPECT_EQ(out.graph.typeIntra, PathType::LOC);
  EXPECT_TRUE(out.stats.optimal);
  EXPECT_EQ(out.stats.attempts, 1);
  EXPECT_EQ(out.stats.duplicatedFrom, 0);
  EXPECT_TRUE(
      log.has("INFO Pattern 4, crossNic 0, nChannels 16, speed 42.000000/42.000000, type LOC/PIX, "
              "sameChannels 1"));
  EXPECT_TRUE(log.has("INFO  0 : GPU/3"));
  EXPECT_TRUE(log.has("INFO 15 : GPU/3"));
}

TEST(TopoNcclOldSearch, TwoGpusOnOneSwitchNeedTypePixAndStopAtTotalWidth) {
  // The only path is PIX at 24 GB/s (seed tier 24). NVL and NVB attempts
  // (each with sameChannels 1, then 0) find nothing; the fifth attempt (PIX,
  // sameChannels 1) finds 6 -> 7 -> 6, which uses every link at 24, and
  // 1 channel x 24 >= totalWidth 24 ends the descent.
  const TopoSystem sys = searchSystem("two_gpus_switch.xml", share({6, 7}, 1, 8));
  LogLines log;
  const auto out = mustSearch(sys, log);
  expectValidRings(sys, out.graph);
  EXPECT_EQ(out.graph.nChannels, 1);
  EXPECT_EQ(row(out.graph, 0), (std::vector<int>{6, 7}));
  EXPECT_EQ(out.graph.speedIntra, 24.0F);
  EXPECT_EQ(out.graph.speedInter, 24.0F);
  EXPECT_EQ(out.graph.typeIntra, PathType::PIX);
  EXPECT_EQ(out.graph.typeInter, PathType::PIX);
  EXPECT_EQ(out.graph.sameChannels, 1);
  EXPECT_EQ(out.stats.attempts, 5);
  EXPECT_FALSE(out.stats.fellBack);
  EXPECT_TRUE(
      log.has("INFO Pattern 4, crossNic 0, nChannels 1, speed 24.000000/24.000000, type PIX/PIX, "
              "sameChannels 1"));
}

TEST(TopoNcclOldSearch, FourGpuMeshUsesEveryLinkTwiceAtTier21) {
  // 12 directed links of 42 GB/s; totalWidth = 3 x 42 = 126 per GPU. At
  // tier 42 each link carries one channel, and the complete digraph on 4
  // vertices has no decomposition into 3 Hamiltonian cycles: 2 rings (84).
  // Tiers 30 and 24 still fit one channel per link (60, 48). At 21
  // (21/42 > 0.49) each link carries two, and the 6 directed Hamiltonian
  // cycles through GPU 0 use every link exactly twice: 6 x 21 = 126 =
  // totalWidth, which ends the descent. 21 < 25: no doubling.
  const TopoSystem sys = searchSystem("nvlink_mesh4.xml", share({0, 1, 2, 3}, 1, 4));
  LogLines log;
  const auto out = mustSearch(sys, log);
  expectValidRings(sys, out.graph);
  const TopoGraph& g = out.graph;
  ASSERT_EQ(g.nChannels, 6);
  EXPECT_EQ(out.stats.duplicatedFrom, 0);
  EXPECT_EQ(g.speedIntra, 21.0F);
  EXPECT_EQ(g.speedInter, 21.0F);
  EXPECT_EQ(g.typeIntra, PathType::NVL);
  std::map<std::pair<int, int>, int> uses;
  std::set<std::vector<int>> cycles;
  for (int c = 0; c < 6; ++c) {
    auto r = row(g, c);
    std::rotate(r.begin(), std::find(r.begin(), r.end(), 0),
                r.end());  // the same cycle starts anywhere
    cycles.insert(r);
    for (int i = 0; i < 4; ++i) ++uses[{g.channel(c)[i], g.channel(c)[(i + 1) % 4]}];
  }
  EXPECT_EQ(cycles.size(), 6u);
  EXPECT_EQ(uses.size(), 12u);
  for (const auto& [link, n] : uses) EXPECT_EQ(n, 2) << link.first << "->" << link.second;
}

TEST(TopoNcclOldSearch, FastRingIsDoubledWithSpeedsHalved) {
  // Two GPUs, 42 GB/s each way: seed 42, the first attempt finds 10 -> 11 ->
  // 10 using both links fully; 1 x 42 >= totalWidth 42 ends the search.
  // 42 >= 25: doubled to min(2 x 1, 16) = 2 channels, speeds 42 / ceil(2/1).
  const TopoSystem sys = searchSystem("nvlink_pair.xml", share({10, 11}, 1, 2));
  LogLines log;
  const auto out = mustSearch(sys, log);
  expectValidRings(sys, out.graph);
  const TopoGraph& g = out.graph;
  EXPECT_EQ(out.stats.attempts, 1);
  EXPECT_EQ(out.stats.duplicatedFrom, 1);
  ASSERT_EQ(g.nChannels, 2);
  EXPECT_EQ(row(g, 0), (std::vector<int>{10, 11}));
  EXPECT_EQ(row(g, 1), (std::vector<int>{10, 11}));
  EXPECT_EQ(g.speedIntra, 21.0F);
  EXPECT_EQ(g.speedInter, 21.0F);
  EXPECT_TRUE(
      log.has("INFO Pattern 4, crossNic 0, nChannels 2, speed 21.000000/21.000000, type NVL/PIX, "
              "sameChannels 1"));
}

TEST(TopoNcclOldSearch, PcieHostCrossesNumaOncePerChannelThroughBothNics) {
  // Every ring holds all 8 GPUs, so it crosses between the NUMA nodes over
  // the 9 GB/s SYS links: tiers 12 and 10 fail everywhere; at 9 a ring
  // entering and leaving by the same NIC uses both SYS directions (1
  // channel). With crossNic (allowed: 2 NETs, template auto) each ring
  // crosses once: NET a -> its 4 local GPUs -> the other 4 -> the other NET,
  // one ring per direction: 2 x 9 = 18, which no lower tier beats.
  const TopoSystem sys =
      searchSystem("pcie_host.xml", share({8, 9, 10, 11, 12, 13, 14, 15}, 2, 16));
  ASSERT_EQ(sys.count(NodeType::NET), 2);
  LogLines log;
  const auto out = mustSearch(sys, log);
  expectValidRings(sys, out.graph);
  const TopoGraph& g = out.graph;
  ASSERT_EQ(g.nChannels, 2);
  EXPECT_EQ(g.speedIntra, 9.0F);
  EXPECT_EQ(g.speedInter, 9.0F);
  EXPECT_EQ(g.crossNic, 1);
  EXPECT_EQ(g.typeIntra, PathType::SYS);
  EXPECT_EQ(g.typeInter, PathType::SYS);
  std::set<int> entries;
  for (int c = 0; c < 2; ++c) {
    const auto io = g.inter[static_cast<std::size_t>(c)];
    EXPECT_NE(io[0], io[1]) << "channel " << c;
    entries.insert(io[0]);
    // NET 0 sits with ranks 8..11, NET 1 with 12..15.
    const auto r = row(g, c);
    const int firstLow = io[0] == 0 ? 8 : 12;
    for (int i = 0; i < 8; ++i) {
      const int lo = i < 4 ? firstLow : 20 - firstLow;
      EXPECT_TRUE(r[static_cast<std::size_t>(i)] >= lo && r[static_cast<std::size_t>(i)] < lo + 4)
          << "channel " << c << " position " << i;
    }
  }
  EXPECT_EQ(entries, (std::set<int>{0, 1}));
}

TEST(TopoNcclOldSearch, SingleNodeJobIgnoresTheNics) {
  // All ranks local: the NETs are dropped, the ring closes on itself.
  const TopoSystem sys = searchSystem("pcie_host.xml", share({8, 9, 10, 11, 12, 13, 14, 15}, 1, 8));
  EXPECT_EQ(sys.count(NodeType::NET), 0);
  LogLines log;
  const auto out = mustSearch(sys, log);
  expectValidRings(sys, out.graph);
  EXPECT_TRUE(isTier(out.graph.speedIntra));
}

TEST(TopoNcclOldSearch, TwoGpusWithoutPathFallBackToSimpleOrder) {
  TopoSystem sys;
  for (int i = 0; i < 2; ++i) {
    auto ref = nccom::topo::addNode(sys, NodeType::GPU, 0x1000 * (i + 1));
    ASSERT_TRUE(ref.ok());
    sys.at(*ref).gpu = {i, 20 + i, 2, 0};
  }
  ASSERT_TRUE(nccom::topo::computePaths(sys).ok());
  LogLines log;
  const auto out = mustSearch(sys, log);
  const TopoGraph& g = out.graph;
  EXPECT_TRUE(out.stats.fellBack);
  EXPECT_TRUE(log.has("WARN Could not find a path for pattern 4, falling back to simple order"));
  ASSERT_EQ(g.nChannels, 1);
  EXPECT_EQ(row(g, 0), (std::vector<int>{20, 21}));
  EXPECT_EQ(g.inter[0], (std::array<int, 2>{0, 0}));
  EXPECT_EQ(g.speedIntra, 0.1F);
  EXPECT_EQ(g.speedInter, 0.1F);
  EXPECT_EQ(g.typeIntra, PathType::SYS);
  EXPECT_EQ(g.typeInter, PathType::SYS);
}

TEST(TopoNcclOldSearch, SmallGlobalBudgetEndsTheDescent) {
  const TopoSystem sys =
      searchSystem("pcie_host.xml", share({8, 9, 10, 11, 12, 13, 14, 15}, 2, 16));
  SearchBudgets tiny;
  tiny.global = 40;
  tiny.attempt = 30;
  tiny.sameChannels = 10;
  tiny.pciOrder = 10;
  LogLines log;
  const auto out = mustSearch(sys, log, {}, tiny);
  EXPECT_TRUE(out.stats.budgetExhausted);
  EXPECT_LE(out.stats.chargedSteps, tiny.global + tiny.attempt);
  expectValidRings(sys, out.graph);  // a ring or the fallback, never garbage
}

TEST(TopoNcclOldSearch, RealBudgetEndsAHopelessSearch) {
  // narrow_gpu.xml: core 9's 0.1875 GB/s link admits only the last tier;
  // every faster attempt walks the orders of the other nine (9! leaves) into
  // its budget, so the global budget runs out first and the result is the
  // fallback. What matters: it ends, within the budget.
  const TopoSystem sys =
      searchSystem("narrow_gpu.xml", share({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 1, 10));
  LogLines log;
  const auto start = std::chrono::steady_clock::now();
  const auto out = mustSearch(sys, log);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(out.stats.budgetExhausted);
  EXPECT_LE(out.stats.chargedSteps, kGlobalBudget + kAttemptBudget);
  EXPECT_TRUE(out.stats.fellBack);
  EXPECT_LT(seconds, 30.0);
  expectValidRings(sys, out.graph);
}

TEST(TopoNcclOldSearch, ChannelBoundsAndDuplicationFollowTheRequest) {
  // One GPU with maxChannels 3: optimal at 3 channels, doubling capped by
  // maxChannels (min(6, 3) = 3): nothing to double.
  const TopoSystem sys = searchSystem("one_gpu.xml", share({3}, 1, 1));
  LogLines log;
  SearchRequest req;
  req.maxChannels = 3;
  const auto out = mustSearch(sys, log, req);
  EXPECT_EQ(out.graph.nChannels, 3);
  EXPECT_EQ(out.graph.speedIntra, 42.0F);
  EXPECT_EQ(out.stats.duplicatedFrom, 0);
}

TEST(TopoNcclOldSearch, BadRequestsAreErrors) {
  const TopoSystem sys = searchSystem("one_gpu.xml", share({3}, 1, 1));
  SearchRequest tree;
  tree.pattern = nccom::topo::SearchPattern::Tree;
  auto r = oldSearch(sys, tree, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "OLD search: pattern 3 is not implemented (only RING, pattern 4, is ever built)");
  SearchRequest many;
  many.maxChannels = 33;
  EXPECT_FALSE(oldSearch(sys, many, {}).ok());
  EXPECT_EQ(oldSearch(TopoSystem{}, {}, {}).error().message,
            "OLD search: the system has no GPU (NeuronCore) to put on a ring");
  TopoSystem noPaths;
  auto ref = nccom::topo::addNode(noPaths, NodeType::GPU, 0x1000);
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ(oldSearch(noPaths, {}, {}).error().message,
            "OLD search: paths are not computed (call computePaths first)");
}

TEST(TopoNcclOldSearch, CompareGraphsPrefersChannelsTimesSpeedThenFewerHops) {
  TopoGraph a, b;
  a.nChannels = 2;
  a.speedIntra = 10.0F;
  b.nChannels = 1;
  b.speedIntra = 18.0F;
  EXPECT_TRUE(RingSearch::better(a, b));  // 20 > 18
  EXPECT_FALSE(RingSearch::better(b, a));
  b.nChannels = 2;
  b.speedIntra = 10.0F;
  a.nHops = 4;
  b.nHops = 6;
  EXPECT_TRUE(RingSearch::better(a, b));  // equal bandwidth, fewer hops
  b.crossNic = 1;
  EXPECT_FALSE(RingSearch::better(a, b));  // ... but not across a crossNic change
  a.minChannels = 3;
  EXPECT_FALSE(RingSearch::better(a, TopoGraph{}));  // below minChannels
}

}  // namespace
}  // namespace topo_nccl_test
