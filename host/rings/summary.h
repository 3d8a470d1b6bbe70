// What the ring stage built, as log lines and as a plain summary for a
// neuronGetCommInfo-style report (rings, kangaRing paths, MLA cycles).
#pragma once

#include "rings/channels.h"
#include "rings/kangaring.h"
#include "rings/mla_cycles.h"
#include "rings/postset.h"

#include <optional>
#include <string>
#include <vector>

namespace nccom::rings {

struct GraphSummary {
  int rank = 0;
  int nRanks = 0;
  Rings rings;
  std::vector<KangaRingPath> kangaRing;  // empty except on Trn3-SwitchV1
  MlaCycles mla;
  std::optional<P2pChannels> p2p;
  // The NIC of each ring channel (netDevForChannel of the searched graph for
  // this rank; -1 when the graph has none). rings.nChannels entries.
  std::vector<int> channelNic;
};

// Upstream's rank-0 dump: "Channel %02d/%02d : r0 r1 ..." per ring channel,
// the ranks in userRanks order (from rank 0 on rank 0). The caller logs them
// on rank 0 only.
std::vector<std::string> channelLines(const Rings& rings);

// Multi-line plain text: counts, then one line per ring channel (prev, next,
// duplicate flag, ring order), kangaRing path, MLA cycle and violation.
std::string describe(const GraphSummary& summary);

// Logs (INFO, INIT|GRAPH) the channel lines when summary.rank == 0, the
// kangaRing lines when there are paths, and "built %d mla cycles".
void logGraphSummary(const GraphSummary& summary);

}  // namespace nccom::rings
