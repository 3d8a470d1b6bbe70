// GraphPostset: every rank of synthetic clusters presets, gathers and
// postsets; the rings are checked against the clusters' own intra orders
// and node order (never against the implementation's output).
// GraphBuildRings: ncclBuildRings and its two errors on hand-made tables.
#include "rings/postset.h"

#include "rings/summary.h"
#include "synthetic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <sstream>

namespace nccom::rings {
namespace {

using test::Cluster;
using test::IntraOrder;
using test::Numbering;

struct Config {
  int nNodes, nLocal, nChannels;
  Numbering numbering;
  IntraOrder intra;
  bool shuffleNodes;
};

std::string name(const Config& c) {
  static const char* orders[] = {"Identity", "Reverse", "Rotated", "Random"};
  std::ostringstream s;
  s << c.nNodes << "x" << c.nLocal << "_ch" << c.nChannels << "_"
    << (c.numbering == Numbering::Blocked ? "Blocked" : "Interleaved") << "_"
    << orders[static_cast<int>(c.intra)] << (c.shuffleNodes ? "_NodeOrderShuffled" : "");
  return s.str();
}

void PrintTo(const Config& c, std::ostream* os) { *os << name(c); }

class GraphPostset : public ::testing::TestWithParam<Config> {};

// The rule a ring must follow, straight from the cluster: after rank a comes
// a's successor in its node's intra order, or, when a is its node's tail
// (ringSend), the head (ringRecv) of the next node in node order.
int expectedNext(const Cluster& cl, const std::vector<int>& nodePos, const std::vector<int>& order,
                 int c, int a) {
  const int node = cl.rankNode[a];
  const auto& o = cl.order[node][c];
  const int i = static_cast<int>(std::find(o.begin(), o.end(), a) - o.begin());
  if (i + 1 < cl.nLocal) return o[i + 1];
  const int nextNode = order[(nodePos[node] + 1) % cl.nNodes];
  return cl.order[nextNode][c][0];
}

TEST_P(GraphPostset, EveryRankBuildsTheSameRingsFollowingIntraAndNodeOrder) {
  const Config cfg = GetParam();
  const Cluster cl =
      test::makeCluster(cfg.nNodes, cfg.nLocal, cfg.nChannels, cfg.numbering, cfg.intra, 7);
  std::vector<int> nodeOrder;  // empty: node index order
  std::vector<int> order(cl.nNodes);
  std::iota(order.begin(), order.end(), 0);
  if (cfg.shuffleNodes) order = nodeOrder = test::shuffled(cl.nNodes, 99);
  std::vector<int> nodePos(cl.nNodes);
  for (int p = 0; p < cl.nNodes; ++p) nodePos[order[p]] = p;

  const std::vector<TopoRanks> frags = test::gatherFragments(cl);
  const int n = cl.nChannels, nOut = std::min(32, 2 * n), nRanks = cl.nRanks;

  // Rank 0's rings: each must follow the hop rule and visit every rank once.
  auto r0 = postset(test::inputFor(cl, frags, 0, nodeOrder));
  ASSERT_TRUE(r0.ok()) << r0.error().message;
  ASSERT_EQ(r0->baseChannels, n);
  ASSERT_EQ(r0->nChannels, nOut);
  ASSERT_EQ(r0->channels.size(), static_cast<std::size_t>(nOut));
  std::vector<std::vector<int>> pos0(
      nOut, std::vector<int>(nRanks, -1));  // rank -> index in rank 0's ring
  for (int c = 0; c < nOut; ++c) {
    const int base = c < n ? c : c - n;
    const auto& u = r0->channels[c].userRanks;
    ASSERT_EQ(u.size(), static_cast<std::size_t>(nRanks));
    ASSERT_EQ(u[0], 0);
    for (int i = 0; i < nRanks; ++i) {
      ASSERT_TRUE(u[i] >= 0 && u[i] < nRanks && pos0[c][u[i]] == -1)
          << "channel " << c << " repeats " << u[i];
      pos0[c][u[i]] = i;
      const int want = expectedNext(cl, nodePos, order, base, u[i]);
      ASSERT_EQ(u[(i + 1) % nRanks], want) << "channel " << c << " after rank " << u[i];
    }
    EXPECT_EQ(r0->channels[c].duplicate, c >= n);
  }

  // Every rank: the same rings, as rotations starting at itself.
  for (int r = 0; r < nRanks; ++r) {
    auto res = postset(test::inputFor(cl, frags, r, nodeOrder));
    ASSERT_TRUE(res.ok()) << "rank " << r << ": " << res.error().message;
    ASSERT_EQ(res->nChannels, nOut);
    for (int c = 0; c < nOut; ++c) {
      const RingChannel& ch = res->channels[c];
      const auto& u0 = r0->channels[c].userRanks;
      const int p = pos0[c][r];
      bool rotation = ch.userRanks.size() == static_cast<std::size_t>(nRanks);
      for (int i = 0; rotation && i < nRanks; ++i)
        rotation = ch.userRanks[i] == u0[(p + i) % nRanks];
      ASSERT_TRUE(rotation) << "rank " << r << " channel " << c
                            << " is not a rotation of rank 0's ring";
      ASSERT_EQ(ch.next, u0[(p + 1) % nRanks]) << "rank " << r << " channel " << c;
      ASSERT_EQ(ch.prev, u0[(p + nRanks - 1) % nRanks]) << "rank " << r << " channel " << c;
      if (c >= n) {  // the doubled half is an identical copy
        ASSERT_EQ(ch.userRanks, res->channels[c - n].userRanks);
        ASSERT_EQ(ch.prev, res->channels[c - n].prev);
        ASSERT_EQ(ch.next, res->channels[c - n].next);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Clusters, GraphPostset,
    ::testing::Values(Config{1, 1, 1, Numbering::Blocked, IntraOrder::Identity, false},
                      Config{1, 2, 1, Numbering::Blocked, IntraOrder::Reverse, false},
                      Config{1, 8, 4, Numbering::Blocked, IntraOrder::Random, false},
                      Config{2, 1, 2, Numbering::Blocked, IntraOrder::Identity, false},
                      Config{2, 4, 3, Numbering::Interleaved, IntraOrder::Reverse, false},
                      Config{3, 5, 16, Numbering::Blocked, IntraOrder::Random, true},
                      Config{4, 16, 17, Numbering::Blocked, IntraOrder::Rotated, false},
                      Config{5, 3, 31, Numbering::Interleaved, IntraOrder::Rotated, true},
                      Config{7, 6, 12, Numbering::Interleaved, IntraOrder::Random, true},
                      Config{8, 8, 32, Numbering::Blocked, IntraOrder::Random, true},
                      Config{16, 2, 2, Numbering::Interleaved, IntraOrder::Random, false},
                      Config{32, 4, 16, Numbering::Blocked, IntraOrder::Random, true},
                      Config{64, 1, 4, Numbering::Blocked, IntraOrder::Identity, true},
                      Config{1, 64, 8, Numbering::Blocked, IntraOrder::Random, false},
                      Config{64, 64, 1, Numbering::Interleaved, IntraOrder::Random, true}),
    [](const auto& info) { return name(info.param); });

// 2 nodes x 2 ranks (node 0: ranks 0 1, node 1: ranks 2 3), identity order.
Cluster small() { return test::makeCluster(2, 2, 1, Numbering::Blocked, IntraOrder::Identity); }

std::string postsetError(const Cluster& cl, const std::vector<TopoRanks>& frags, int rank,
                         const std::vector<int>& nodeOrder = {}) {
  auto r = postset(test::inputFor(cl, frags, rank, nodeOrder));
  return r.ok() ? std::string("ok") : r.error().message;
}

TEST(GraphPostsetErrors, NodeOrderMustBeAPermutation) {
  const Cluster cl = test::makeCluster(3, 2, 1, Numbering::Blocked, IntraOrder::Identity);
  const auto frags = test::gatherFragments(cl);
  EXPECT_EQ(postsetError(cl, frags, 0, {0, 0, 2}),
            "postset: node order[1] = 0 repeats a node: not a permutation");
  EXPECT_EQ(postsetError(cl, frags, 0, {0, 1, 3}),
            "postset: node order[2] = 3 outside [0, 3): not a permutation");
  EXPECT_EQ(postsetError(cl, frags, 0, {-1, 1, 2}),
            "postset: node order[0] = -1 outside [0, 3): not a permutation");
  EXPECT_EQ(postsetError(cl, frags, 0, {0, 1}),
            "postset: node order has 2 entries, expected a permutation of 3 nodes");
  EXPECT_EQ(postsetError(cl, frags, 0, {2, 0, 1}), "ok");
}

TEST(GraphPostsetErrors, RejectsMismatchedInputs) {
  Cluster cl = small();
  auto frags = test::gatherFragments(cl);
  auto in = test::inputFor(cl, frags, 0, {});
  in.fragments = std::span<const TopoRanks>(frags.data(), 3);
  EXPECT_EQ(postset(in).error().message, "postset: 3 fragments for 4 ranks");

  auto fewer = frags;
  fewer[3].ringRecv[0] = -1;  // rank 3 presets no channel
  EXPECT_EQ(postsetError(cl, fewer, 0),
            "postset: rank 3's fragment has 0 channels, this rank has 1: every rank must preset "
            "the same channel count");
  auto far = frags;
  far[1].ringNext[0] = 99;
  EXPECT_EQ(postsetError(cl, far, 0),
            "postset: rank 1's fragment: ringNext[0] = 99 outside [-1, 4)");

  cl.nodesFirstRank = {0, 0};
  EXPECT_EQ(postsetError(cl, frags, 0),
            "postset: nodesFirstRank[1] = 0 is also the first rank of another node");
  cl.nodesFirstRank = {0, 4};
  EXPECT_EQ(postsetError(cl, frags, 0), "postset: nodesFirstRank[1] = 4 outside [0, 4)");
  cl = small();
  EXPECT_EQ(postsetError(cl, frags, 4), "postset: myRank 4 outside [0, 4)");
}

TEST(GraphPostsetErrors, BrokenRingsGiveBuildRingsErrors) {
  const Cluster cl = small();
  const auto frags = test::gatherFragments(cl);
  // Node 1 claims its head (rank 2) is also its tail: the stitch sends 2 -> 0
  // and rank 3 is never reached. Walk 0 1 2 0, then next[0] = 1 != 0.
  auto shortcut = frags;
  shortcut[2].ringSend[0] = 2;
  auto r = postset(test::inputFor(cl, shortcut, 0, {}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "Error : ring 0 does not loop back to start (1 != 0)");
  EXPECT_EQ(r.error().status, NRT_FAILURE);

  // Node 1 claims rank 0 as its head: the stitch sends 1 -> 0, so the walk
  // 0 1 0 1 closes after 4 steps but never meets ranks 2 and 3.
  auto loop = frags;
  loop[2].ringRecv[0] = 0;
  EXPECT_EQ(postsetError(cl, loop, 0), "Error : ring 0 does not contain rank 2");

  // prev and next disagree: rank 1 says its predecessor is 3.
  auto skew = frags;
  skew[1].ringPrev[0] = 3;
  EXPECT_EQ(postsetError(cl, skew, 0),
            "Error : ring 0 has next[0] = 1 but prev[1] = 3: the fragments disagree");
}

TEST(GraphPostsetErrors, DoublingIsCappedAt32) {
  for (int n : {1, 15, 16, 17, 31, 32}) {
    const Cluster cl = test::makeCluster(2, 3, n, Numbering::Blocked, IntraOrder::Random);
    const auto frags = test::gatherFragments(cl);
    auto r = postset(test::inputFor(cl, frags, 4, {}));
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->nChannels, std::min(32, 2 * n)) << "n = " << n;
    for (int c = 0; c < r->nChannels; ++c) {
      EXPECT_EQ(r->channels[c].duplicate, c >= n);
      if (c >= n) {
        EXPECT_EQ(r->channels[c].userRanks, r->channels[c - n].userRanks);
      }
    }
  }
  // n = 17: channel 31 copies channel 14, channel 16 is searched.
  const Cluster cl = test::makeCluster(1, 4, 17, Numbering::Blocked, IntraOrder::Rotated);
  const auto frags = test::gatherFragments(cl);
  auto r = postset(test::inputFor(cl, frags, 0, {}));
  ASSERT_TRUE(r.ok());
  // Rotated: channel c starts at local (c + 1) % 4; on one node the ring is
  // that order closed, read from rank 0: always 0 1 2 3.
  EXPECT_EQ(r->channels[31].userRanks, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(r->channels[31].next, 1);
  EXPECT_EQ(r->channels[31].prev, 3);
  EXPECT_FALSE(r->channels[16].duplicate);
}

TEST(GraphPostsetErrors, ChannelLinesAndSummary) {
  const Cluster cl = test::makeCluster(1, 3, 1, Numbering::Blocked, IntraOrder::Identity);
  const auto frags = test::gatherFragments(cl);
  auto r = postset(test::inputFor(cl, frags, 0, {}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(channelLines(*r),
            (std::vector<std::string>{"Channel 00/02 : 0 1 2", "Channel 01/02 : 0 1 2"}));
  GraphSummary s;
  s.rank = 0;
  s.nRanks = 3;
  s.rings = *r;
  const std::string text = describe(s);
  EXPECT_CONTAINS(text, "rank 0/3: 2 ring channels (1 searched, doubled), 0 kangaring paths");
  EXPECT_CONTAINS(text, "ring 0: prev 2 next 1 order 0 1 2\n");
  EXPECT_CONTAINS(text, "ring 1: prev 2 next 1 (duplicate of 0) order 0 1 2\n");
}

// Fragments that are each valid but come from different searches (mixed
// intra orders): postset either builds real rings or names the problem.
TEST(GraphPostsetErrors, MixedValidFragmentsGiveRingsOrErrors) {
  std::mt19937 rng(77);
  int built = 0, refused = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const Cluster a =
        test::makeCluster(3, 4, 2, Numbering::Blocked, IntraOrder::Random, 100 + trial);
    const Cluster b =
        test::makeCluster(3, 4, 2, Numbering::Blocked, IntraOrder::Random, 900 + trial);
    const auto fa = test::gatherFragments(a), fb = test::gatherFragments(b);
    std::vector<TopoRanks> mixed(a.nRanks);
    for (int r = 0; r < a.nRanks; ++r) mixed[r] = (rng() % 4 == 0) ? fb[r] : fa[r];
    auto res = postset(test::inputFor(a, mixed, 0, {}));
    if (!res.ok()) {
      ++refused;
      EXPECT_EQ(res.error().message.rfind("Error : ring ", 0), 0u) << res.error().message;
      continue;
    }
    ++built;
    for (const RingChannel& ch : res->channels) {
      std::vector<int> sorted = ch.userRanks;
      std::sort(sorted.begin(), sorted.end());
      std::vector<int> all(a.nRanks);
      std::iota(all.begin(), all.end(), 0);
      ASSERT_EQ(sorted, all);
      ASSERT_EQ(ch.next, ch.userRanks[1]);
      ASSERT_EQ(ch.prev, ch.userRanks.back());
    }
  }
  EXPECT_GT(refused, 0);
  EXPECT_GT(built, 0);
}

TEST(GraphBuildRings, WalksNextFromTheRank) {
  std::vector<int> next = {2, 3, 1, 0};  // 0 -> 2 -> 1 -> 3 -> 0
  std::vector<int> rings(4);
  ASSERT_TRUE(buildRings(1, rings, 1, 4, next).ok());
  EXPECT_EQ(rings, (std::vector<int>{1, 3, 0, 2}));
  // Two rings, second one reversed.
  std::vector<int> two = {1, 2, 3, 0, 3, 0, 1, 2};
  std::vector<int> out(8);
  ASSERT_TRUE(buildRings(2, out, 2, 4, two).ok());
  EXPECT_EQ(out, (std::vector<int>{2, 3, 0, 1, 2, 1, 0, 3}));
}

TEST(GraphBuildRings, TheTwoErrorMessages) {
  std::vector<int> rings(4);
  std::vector<int> noLoop = {1, 2, 0, 3};  // 0 1 2 0, then 1
  auto a = buildRings(1, rings, 0, 4, noLoop);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().message, "Error : ring 0 does not loop back to start (1 != 0)");
  std::vector<int> pairs = {1, 0, 3, 2};  // 0 1 0 1: closes, misses 2 and 3
  EXPECT_EQ(buildRings(1, rings, 0, 4, pairs).error().message,
            "Error : ring 0 does not contain rank 2");
  // Second ring broken, first fine: the message names ring 1.
  std::vector<int> second = {1, 2, 3, 0, 1, 0, 3, 2};
  std::vector<int> out(8);
  EXPECT_EQ(buildRings(2, out, 0, 4, second).error().message,
            "Error : ring 1 does not contain rank 2");
  // A -1 (unstitched) successor cannot be followed.
  std::vector<int> hole = {1, -1, 3, 0};
  EXPECT_EQ(buildRings(1, rings, 0, 4, hole).error().message,
            "Error : ring 0 does not loop back to start (-1 != 0)");
  std::vector<int> big = {1, 7, 3, 0};
  EXPECT_EQ(buildRings(1, rings, 0, 4, big).error().message,
            "Error : ring 0 does not loop back to start (7 != 0)");
  // Tables too small for the request.
  EXPECT_FALSE(buildRings(2, rings, 0, 4, noLoop).ok());
}

}  // namespace
}  // namespace nccom::rings
