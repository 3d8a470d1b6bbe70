#include "synthetic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

namespace nccom::rings::test {

std::vector<int> shuffled(int n, unsigned seed) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), 0);
  std::mt19937 rng(seed);
  std::shuffle(v.begin(), v.end(), rng);
  return v;
}

Cluster makeCluster(int nNodes, int nLocal, int nChannels, Numbering numbering, IntraOrder intra,
                    unsigned seed) {
  Cluster cl;
  cl.nNodes = nNodes;
  cl.nLocal = nLocal;
  cl.nChannels = nChannels;
  cl.nRanks = nNodes * nLocal;
  cl.rankNode.resize(cl.nRanks);
  cl.localIndex.resize(cl.nRanks);
  cl.nodesFirstRank.assign(nNodes, cl.nRanks);
  auto rankOf = [&](int node, int l) {
    return numbering == Numbering::Blocked ? node * nLocal + l : l * nNodes + node;
  };
  for (int node = 0; node < nNodes; ++node)
    for (int l = 0; l < nLocal; ++l) {
      const int r = rankOf(node, l);
      cl.rankNode[r] = node;
      cl.localIndex[r] = l;
      cl.nodesFirstRank[node] = std::min(cl.nodesFirstRank[node], r);
    }
  cl.order.resize(nNodes);
  for (int node = 0; node < nNodes; ++node) {
    topo::TopoGraph g;
    g.nChannels = nChannels;
    g.nLocal = nLocal;
    for (int c = 0; c < nChannels; ++c) {
      std::vector<int> locals(nLocal);
      std::iota(locals.begin(), locals.end(), 0);
      switch (intra) {
        case IntraOrder::Identity: break;
        case IntraOrder::Reverse: std::reverse(locals.begin(), locals.end()); break;
        case IntraOrder::Rotated:
          std::rotate(locals.begin(), locals.begin() + (c + 1) % nLocal, locals.end());
          break;
        case IntraOrder::Random: locals = shuffled(nLocal, seed * 7919u + node * 131u + c); break;
      }
      std::vector<int> ranks;
      for (int l : locals) ranks.push_back(rankOf(node, l));
      g.intra.insert(g.intra.end(), ranks.begin(), ranks.end());
      g.inter.push_back({2 * c, 2 * c + 1});
      cl.order[node].push_back(ranks);
    }
    cl.graphs.push_back(std::move(g));
  }
  return cl;
}

std::vector<TopoRanks> gatherFragments(const Cluster& cl) {
  std::vector<TopoRanks> out(cl.nRanks);
  for (int r = 0; r < cl.nRanks; ++r) {
    auto f = preset(cl.graphs[cl.rankNode[r]], r);
    EXPECT_TRUE(f.ok()) << (f.ok() ? "" : f.error().message);
    if (!f.ok()) continue;
    const auto bytes = encodeFragment(*f);
    auto back = decodeFragment(bytes, r, cl.nRanks);
    EXPECT_TRUE(back.ok()) << (back.ok() ? "" : back.error().message);
    if (back.ok()) out[r] = *back;
  }
  return out;
}

PostsetInput inputFor(const Cluster& cl, const std::vector<TopoRanks>& fragments, int rank,
                      const std::vector<int>& nodeOrder) {
  PostsetInput in;
  in.fragments = fragments;
  in.nodesFirstRank = cl.nodesFirstRank;
  in.nodeOrder = nodeOrder;
  in.myRank = rank;
  in.nRanks = cl.nRanks;
  in.nChannels = cl.nChannels;
  return in;
}

}  // namespace nccom::rings::test
