// MLA cycles (our design, see docs/decisions/rings.md).
//
// An MLA (a Neuron device; a rank's peer record carries its mla_idx) is
// identified by (node, mla_idx): mla_idx is only unique within a host. A
// channel's *MLA cycle* is the cyclic sequence of MLAs its ring traverses,
// consecutive ranks of one MLA merged into one block. A ring is
// MLA-contiguous when every MLA is one block (the NEW search's
// localsFullyVisited rule); an MLA entered twice is a violation.
//
// What a rank reports (nccl_comm_info_t.mla_cycles[c], nMlaInCycle): the
// part of channel c's cycle on its own node — its node's mla_idx values in
// ring order, starting at its own MLA (as userRanks start at itself), the
// wrap from the last back to the first closing the cycle.
#pragma once

#include "rings/postset.h"

#include <nccom/util/result.h>

#include <span>
#include <string>
#include <vector>

namespace nccom::rings {

struct MlaViolation {
  int channel = 0;
  int node = 0;
  int mla = 0;
  int firstRank = 0;  // first rank of the MLA's first block (ring order from the block start)
  int againRank = 0;  // first rank of the block that re-enters it
  std::string message() const;
};

struct MlaCycles {
  int nMlaInCycle = 0;                   // distinct MLAs on this rank's node
  std::vector<std::vector<int>> cycles;  // per ring channel, this node's MLA cycle (mla_idx)
  std::vector<MlaViolation> violations;  // at most one per (channel, MLA)
};

// rankMla[r] = mla_idx of rank r (>= 0); rankNode[r] = node index of rank r
// (>= 0, equal for ranks sharing a host). Computes every channel of `rings`
// as seen by myRank. Errors only for malformed input; contiguity violations
// are reported in the result (checkMlaContiguity turns them into an error).
Result<MlaCycles> buildMlaCycles(const Rings& rings, int myRank, std::span<const int> rankMla,
                                 std::span<const int> rankNode);

// NRT_INVALID naming the first violation's channel, MLA, node and ranks.
Status checkMlaContiguity(const MlaCycles& cycles);

// "built %d mla cycles"
std::string mlaCyclesLogLine(const MlaCycles& cycles);

}  // namespace nccom::rings
