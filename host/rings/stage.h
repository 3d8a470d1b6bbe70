// The ring stage after the all-gather, in the original's order (that of
// ncclTopoPostset): Postset (stitch, doubling, buildRings), then on
// Trn3-SwitchV1 the kangaRing materialisation, then the MLA cycles, then
// the log lines. The caller (the communicator) owns the all-gather, the
// platform test and the transports.
#pragma once

#include "rings/summary.h"

namespace nccom::rings {

struct StageInput {
  PostsetInput postset;
  std::vector<int> rankMla;   // per rank: mla_idx from the peer records
  std::vector<int> rankNode;  // per rank: node index (same host hash, same node)
  // Trn3-SwitchV1 only (switchV1 false: no kangaRing code runs, as in the
  // original).
  bool switchV1 = false;
  int nKangaPaths = 0;         // comm->nKangaRingChannels
  KangaPaths localKanga;       // this rank's own search result (compared with the assembly)
  std::vector<int> nodeRanks;  // this node's ranks ascending (rings::nodeRanks)
  // MLA contiguity: false (default) logs one WARN naming the first violation
  // and goes on; true makes a violation an error.
  bool strictMla = false;
};

// Errors are those of postset / materialiseKangaRing / buildMlaCycles. On
// success the summary is logged (logGraphSummary) and returned.
Result<GraphSummary> runPostsetStage(const StageInput& in);

}  // namespace nccom::rings
