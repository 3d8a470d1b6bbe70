// Synthetic clusters for the ring-stage tests: N nodes x L local ranks, one
// TopoGraph per node with chosen per-channel intra orders, and a runner that
// does what buildGraphTransportsRank does between Preset and Postset (every
// rank presets, fragments cross the wire form, every rank postsets).
#pragma once

#include "rings/fragment.h"
#include "rings/postset.h"

#include <nccom/topo/graph.h>

#include <functional>
#include <vector>

namespace nccom::rings::test {

enum class Numbering { Blocked, Interleaved };                 // rank = node*L + l, or l*N + node
enum class IntraOrder { Identity, Reverse, Rotated, Random };  // Rotated: by (c + 1) per channel

struct Cluster {
  int nNodes = 0, nLocal = 0, nChannels = 0, nRanks = 0;
  std::vector<topo::TopoGraph> graphs;  // per node
  std::vector<int> rankNode;            // per rank
  std::vector<int> nodesFirstRank;      // per node: lowest rank
  std::vector<int> localIndex;          // per rank: l
  // order[node][c]: channel c's ring order on the node (global ranks).
  std::vector<std::vector<std::vector<int>>> order;
};

Cluster makeCluster(int nNodes, int nLocal, int nChannels, Numbering numbering, IntraOrder intra,
                    unsigned seed = 1);

// A fixed-seed permutation of [0, n).
std::vector<int> shuffled(int n, unsigned seed);

// Presets every rank and round-trips each fragment through the wire form.
std::vector<TopoRanks> gatherFragments(const Cluster& cl);

// Postset input for `rank` over `fragments`.
PostsetInput inputFor(const Cluster& cl, const std::vector<TopoRanks>& fragments, int rank,
                      const std::vector<int>& nodeOrder);

}  // namespace nccom::rings::test

// EXPECT_CONTAINS(text, part): part occurs in text (printing both otherwise).
#define EXPECT_CONTAINS(text, part)                                                 \
  do {                                                                              \
    const std::string nccom_text_ = (text);                                         \
    const std::string nccom_part_ = (part);                                         \
    EXPECT_NE(nccom_text_.find(nccom_part_), std::string::npos)                     \
        << "  text: " << nccom_text_ << "\n  expected to contain: " << nccom_part_; \
  } while (0)
