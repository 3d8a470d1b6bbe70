// compute_graph's body as a pure function (the original's neuronTopoGetGraph
// and its <channel> XML round trip): the NEW search over this node's vcores,
// the channels filled from its rings, and the NCCL graph XML written against
// the host's <system> text.
//
// Trn3 Switch-V1 extras ride on the <graph> element as attributes, because
// sdk/topo's graphFromXml accepts only <channel> children under <graph>
// but ignores unknown attributes (docs/internals/topo-neuron.md, "Graph XML
// extensions"):
//   crossracktorack="0|1"
//   nkangaring="L"                 lanes (<= 4, MAX_KANGA_PATHS)
//   kangaring0="d,d,...,d" ...     lane k: the vcore ids (<gpu dev> values)
//                                  of the base ring rotated by k*len/L
#pragma once

#include "search.h"
#include "synthesize.h"

#include <nccom/topo/graph.h>
#include <nccom/util/result.h>

#include <string>
#include <string_view>
#include <vector>

namespace nccom::topo_neuron {

inline constexpr int kSwitchV1KangaLanes = 4;    // one per NIC lane, MAX_KANGA_PATHS
inline constexpr int kSwitchV1NodesPerJbog = 3;  // docs/decisions/topo-neuron.md, "Pods"
inline constexpr int kSwitchV1JbogsPerPod = 3;

struct GraphRequest {
  int pattern = 4;  // RING
  int crossNic = 2;
  int minChannels = 1;
  int maxChannels = topo::kMaxChannels;
  uint64_t budget = kDefaultSearchBudget;
};

struct ComputedGraph {
  topo::TopoGraph graph;         // ranks are the node's global ranks
  PathContainer kangaRing;       // vcore ids; Switch-V1 only
  bool crossRackToRack = false;  // Switch-V1 only
  std::string xml;               // <graphs> text
};

// Parses `systemXml` (sdk/topo, with systemOptions(d)), checks that it holds
// exactly the share's ranks on their vcores, runs getPaths over those vcores,
// fills the graph and writes it. Errors name the rule broken.
Result<ComputedGraph> computeGraph(const PlatformDescription& d, const NodeShare& share,
                                   std::string_view systemXml, const GraphRequest& request,
                                   bool disableVerify);

// "0,1,3,2": the attribute text of one kangaRing lane.
std::string joinDevs(const std::vector<int>& devs);

}  // namespace nccom::topo_neuron
