// UltraServer pod inter-node ordering (the rules are our design,
// docs/decisions/topo-neuron.md, "podNodeOrder(nodes, geometry)").
#pragma once

#include "platform.h"

#include <nccom/util/result.h>

#include <vector>

namespace nccom::topo_neuron {

struct PodNode {
  int node;       // the caller's node index (returned in the order)
  int podId;      // which pod (UltraServer) the node is in
  int podNodeId;  // its position inside the pod, 0 .. podNodes-1
};

struct PodGeometry {
  PodLayout layout = PodLayout::None;
  int podNodes = 0;  // instances per pod
};

PodGeometry podGeometry(Variant v);

// Whether two pod positions are direct neighbours in the pod fabric.
bool podNeighbours(const PodGeometry& g, int a, int b);

// An order of all nodes: pods by ascending podId; inside a pod, a ring over
// the present positions where consecutive nodes are pod neighbours (closing
// hop included) if one exists, else such a path, else ascending podNodeId.
// Errors: a podNodeId outside the pod, two nodes at one position, a pod
// larger than 64 nodes.
Result<std::vector<int>> podNodeOrder(const std::vector<PodNode>& nodes, const PodGeometry& g);

}  // namespace nccom::topo_neuron
