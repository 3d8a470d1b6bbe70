// kangaRing paths for Trn3 Switch-V1 and the jbog id math.
#pragma once

#include "search.h"

#include <nccom/topo/graph.h>
#include <nccom/util/result.h>

#include <vector>

namespace nccom::topo_neuron {

// `lanes` copies of `base` (duplicatePaths). Errors: more than
// MAX_KANGA_PATHS copies (the original's assert "paths.size() <=
// MAX_KANGA_PATHS"), a base longer than 64 entries, or an empty base.
Result<PathContainer> duplicatePaths(const std::vector<int>& base, int lanes);

// `path` started `offset` entries later (offset taken modulo the length).
std::vector<int> rotatePath(const std::vector<int>& path, int offset);

// The kangaRing set: lane k is `base` rotated by k * len / lanes, so the
// lanes start at evenly spaced points of the ring. Lanes beyond the ring
// length would repeat a rotation, so at most len lanes are built.
Result<PathContainer> kangaRingPaths(const std::vector<int>& base, int lanes);

// Switch-V1 pod geometry: consecutive nodes form a jbog (the nodes behind
// one switch tier); a pod has jbogCount in {1, 2, 3} jbogs.
struct JbogGeometry {
  int ranksPerNode = 1;
  int nodesPerJbog = 1;
  int jbogCount = 1;
};

// neuronTrnSwitchV1JbogId: jbog of `rank`. Errors name the rule broken.
Result<int> switchV1JbogId(int rank, const JbogGeometry& g);

// crossRackToRack: a ring over `nNodes` nodes leaves its jbog.
bool switchV1CrossRack(int nNodes, const JbogGeometry& g);

}  // namespace nccom::topo_neuron
