// GraphKangaRing: assembling kangaRing[k][0..63] from the gathered
// JbogKangaringPath lanes (our design, docs/decisions/rings.md).
#include "rings/kangaring.h"

#include "synthetic.h"

#include <gtest/gtest.h>

namespace nccom::rings {
namespace {

using test::Cluster;
using test::IntraOrder;
using test::Numbering;

// Presets every rank, node `node`'s ranks with `paths`, through the wire form.
std::vector<TopoRanks> gatherWithPaths(const Cluster& cl, int node, const KangaPaths& paths) {
  std::vector<TopoRanks> out(cl.nRanks);
  for (int r = 0; r < cl.nRanks; ++r) {
    auto f = preset(cl.graphs[cl.rankNode[r]], r, cl.rankNode[r] == node ? paths : KangaPaths{});
    EXPECT_TRUE(f.ok());
    auto back = decodeFragment(encodeFragment(*f), r, cl.nRanks);
    EXPECT_TRUE(back.ok()) << back.error().message;
    out[r] = *back;
  }
  return out;
}

KangaRingPath padded(std::vector<int> v) {
  KangaRingPath p;
  p.fill(-1);
  std::copy(v.begin(), v.end(), p.begin());
  return p;
}

// Three nodes of 4 ranks; node 2 holds ranks 8..11.
const KangaPaths kPaths = {{9, 11, 10, 8}, {8, 9, 10, 11}};

TEST(GraphKangaRing, AssemblesPathsFromTheLaneOwners) {
  const Cluster cl = test::makeCluster(3, 4, 1, Numbering::Blocked, IntraOrder::Random);
  const auto frags = gatherWithPaths(cl, 2, kPaths);
  const auto ranks = nodeRanks(cl.graphs[2]);
  EXPECT_EQ(ranks, (std::vector<int>{8, 9, 10, 11}));
  auto k = materialiseKangaRing(frags, ranks, 2, kPaths);
  ASSERT_TRUE(k.ok()) << k.error().message;
  ASSERT_EQ(k->size(), 2u);
  EXPECT_EQ((*k)[0], padded({9, 11, 10, 8}));
  EXPECT_EQ((*k)[1], padded({8, 9, 10, 11}));
  EXPECT_EQ(kangaRingLogLines(*k),
            (std::vector<std::string>{"built 2 kangaring paths", "kangaring path[0]=9 11 10 8",
                                      "kangaring path[1]=8 9 10 11"}));
  // Without this rank's own paths to compare, the same result.
  EXPECT_EQ((*materialiseKangaRing(frags, ranks, 2))[0], padded({9, 11, 10, 8}));
  // Other platforms: no paths, nothing built.
  auto none = materialiseKangaRing(frags, nodeRanks(cl.graphs[0]), 0);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  EXPECT_EQ(kangaRingLogLines(*none), (std::vector<std::string>{"built 0 kangaring paths"}));
}

TEST(GraphKangaRing, LargeNodesUseSixteenOwnersOfFourEntries) {
  for (int nLocal : {5, 16, 20, 64}) {
    const Cluster cl = test::makeCluster(1, nLocal, 1, Numbering::Blocked, IntraOrder::Identity);
    std::vector<int> path = test::shuffled(nLocal, 5);  // a Hamiltonian path over the node
    std::vector<int> rev(path.rbegin(), path.rend());
    const KangaPaths paths = {path, rev, path, rev};
    const auto frags = gatherWithPaths(cl, 0, paths);
    auto k = materialiseKangaRing(frags, nodeRanks(cl.graphs[0]), 4, paths);
    ASSERT_TRUE(k.ok()) << "nLocal " << nLocal << ": " << k.error().message;
    EXPECT_EQ((*k)[0], padded(path));
    EXPECT_EQ((*k)[3], padded(rev));
    // Ranks past slot 15 carry no lane.
    for (int r = 16; r < nLocal; ++r)
      EXPECT_EQ(frags[r].kangaPath[0], (std::array<int, 4>{-1, -1, -1, -1}));
  }
}

class GraphKangaRingErrors : public ::testing::Test {
 protected:
  Cluster cl = test::makeCluster(3, 4, 1, Numbering::Blocked, IntraOrder::Identity);
  std::vector<TopoRanks> frags = gatherWithPaths(cl, 2, kPaths);
  std::vector<int> ranks = nodeRanks(cl.graphs[2]);
  std::string error(int nPaths = 2, const KangaPaths& local = {}) {
    auto k = materialiseKangaRing(frags, ranks, nPaths, local);
    return k.ok() ? std::string("ok") : k.error().message;
  }
};

TEST_F(GraphKangaRingErrors, PathCountAboveFourOrDisagreeing) {
  EXPECT_EQ(error(5), "kangaring: nKangaRingChannels 5 outside [0, 4] (MAX_KANGA_PATHS)");
  EXPECT_EQ(error(-1), "kangaring: nKangaRingChannels -1 outside [0, 4] (MAX_KANGA_PATHS)");
  EXPECT_EQ(error(1), "kangaring: rank 8 carries a lane of path 1 but this rank has 1 paths");
  EXPECT_EQ(error(2, {{9, 11, 10, 8}}),
            "kangaring: this rank's search has 1 paths, nKangaRingChannels is 2");
}

TEST_F(GraphKangaRingErrors, MalformedPaths) {
  frags[8].kangaPath[0] = {9, -1, 10, 8};
  EXPECT_EQ(
      error(),
      "kangaring: path 0 entry 2 (lane 0) = 10 follows a -1: paths are padded only at the end");
  frags[8].kangaPath[0] = {0, 11, 10, 8};
  EXPECT_EQ(error(), "kangaring: path 0 entry 0 (lane 0) = 0 is not a rank of this node");
  frags[8].kangaPath[0] = {9, 9, 10, 8};
  EXPECT_EQ(error(), "kangaring: path 0 entry 1 (lane 0) = 9 repeats a rank");
  frags[8].kangaPath[0] = {-1, -1, -1, -1};
  EXPECT_EQ(error(), "kangaring: path 0 is empty (lane 0 starts with -1)");
  // A lane from the wrong owner: rank 9 (slot 1) writes entries 4..7.
  frags[8].kangaPath[0] = {9, 11, 10, 8};
  frags[9].kangaPath[1] = {11, -1, -1, -1};
  EXPECT_EQ(error(), "kangaring: path 1 entry 4 (lane 1) = 11 repeats a rank");
}

TEST_F(GraphKangaRingErrors, DisagreementWithThisRanksSearch) {
  EXPECT_EQ(error(2, {{9, 11, 8, 10}, {8, 9, 10, 11}}),
            "kangaring: path 0 entry 2 is 10 from lane owner rank 8, this rank's search says 8");
  EXPECT_EQ(error(2, kPaths), "ok");
}

TEST_F(GraphKangaRingErrors, NodeRanksMustBeSortedAndInRange) {
  ranks = {9, 8, 10, 11};
  EXPECT_CONTAINS(error(), "entry 1 is 8");
  ranks = {8, 9, 10, 12};
  EXPECT_CONTAINS(error(), "in [0, 12) in ascending order; entry 3 is 12");
  ranks = {};
  EXPECT_EQ(error(), "kangaring: this node has no ranks");
}

}  // namespace
}  // namespace nccom::rings
