// The global stitch (NCCL's ncclTopoPostset): join every node's ring segments
// into one ring per channel, double the channels (cap 32), and walk each ring
// from this rank (ncclBuildRings). Pure functions over the gathered fragments.
#pragma once

#include "rings/fragment.h"

#include <nccom/util/result.h>

#include <span>
#include <vector>

namespace nccom::rings {

// One channel's ring as this rank sees it (ncclRing, plus enc_ring_t's
// `duplicate`: true for the doubled half, which is an identical copy of
// channel c - nBase; see docs/decisions/rings.md, "Doubled half").
struct RingChannel {
  int prev = -1;
  int next = -1;
  std::vector<int> userRanks;  // ring order starting at this rank, nRanks entries
  bool duplicate = false;
};

struct Rings {
  int baseChannels = 0;               // channels found by the search (before doubling)
  int nChannels = 0;                  // min(32, 2 * baseChannels)
  std::vector<RingChannel> channels;  // nChannels entries
};

struct PostsetInput {
  std::span<const TopoRanks> fragments;  // every rank's fragment, indexed by rank
  std::vector<int> nodesFirstRank;       // per node index: its lowest rank
  std::vector<int> nodeOrder;            // ring order over node indices; empty: 0, 1, ..., nNodes-1
  int myRank = 0;
  int nRanks = 0;
  int nChannels = 0;  // comm->nChannels before doubling (the graph's), 1..32
};

// ncclTopoPostset's ring part. Errors (NRT_INVALID for bad input, NRT_FAILURE
// for rings that do not close) name the rank/node/channel and the rule. Beyond
// the original it checks that prev and next agree (prev[next[x]] == x on every
// channel), so inconsistent fragments cannot give a ring the transports could
// not connect.
Result<Rings> postset(const PostsetInput& in);

// ncclBuildRings, exact: for r < nrings walk next[] from `rank` for
// nranks steps into rings[r*nranks + i]; errors "Error : ring %d does not
// loop back to start (%d != %d)" and "Error : ring %d does not contain rank
// %d". A next[] entry outside [0, nranks) stops the walk and is reported as
// the loop-back error with that entry (it cannot be followed).
Status buildRings(int nrings, std::span<int> rings, int rank, int nranks,
                  std::span<const int> next);

// Checks that `order` is a permutation of [0, nNodes).
Status checkNodeOrder(std::span<const int> order, int nNodes);

}  // namespace nccom::rings
