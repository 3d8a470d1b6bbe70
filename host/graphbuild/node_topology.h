// One node's topology (the original's ncclTopoGetSystem and ncclTopoCompute),
// as every rank of that node computes it alike: the system XML from the first
// topology plugin that describes the machine (or from NCCL_TOPO_FILE), the
// typed system and its paths, and the RING graph from NCCL_GRAPH_FILE, from the
// first plugin whose search answers, or the simple-order fallback. No sockets:
// the cross-rank part is rank_graph.h.
#pragma once

#include "graphbuild/topo_backend.h"

#include <nccom/topo/graph.h>
#include <nccom/topo/paths.h>
#include <nccom/topo/system.h>
#include <nccom/topo_plugin.h>
#include <nccom/util/result.h>

#include <span>
#include <string>
#include <vector>

namespace nccom::graphbuild {

struct GraphSettings {
  // NCCL_TOPO_FILE is set: the system comes from the backend named
  // "nccl" (which reads the file itself, through its configuration).
  bool topo_file_set = false;
  std::string topo_dump_file;  // NCCL_TOPO_DUMP_FILE: written when `dump` is true
  bool dump = false;           // this rank writes the dump (rank 0, as upstream)
  std::string graph_file;      // NCCL_GRAPH_FILE: the graph is loaded, not searched
  int new_algorithm = -1;      // NCCL_GRAPH_USE_NEW_ALGORITHM: -1 unset, 0, 1
  topo::PathSettings paths;    // NCCL_P2P_LEVEL / NCCL_P2P_DISABLE, resolved
};

struct NodeTopology {
  std::string backend;       // the plugin that described the node
  std::string system_xml;    // its text, as returned
  topo::TopoSystem system;   // parsed, paths computed
  topo::TopoGraph graph;     // the RING graph over this node's ranks
  std::string graph_origin;  // e.g. "the NEW search of topology plugin neuron"
  // Trn3-SwitchV1: the kangaRing paths of this node, in ranks,
  // from the graph XML's nccom attributes (nkangaring, kangaring<k>,
  // crossracktorack on <graph>); empty elsewhere.
  std::vector<std::vector<int>> kanga_paths;
};

// The RING template buildGraphTransportsRank starts from (pattern RING,
// crossNic auto, 1..16 channels).
topo::TopoGraph ring_template();

// The backend that describes this node: with NCCL_TOPO_FILE the "nccl"
// backend, otherwise the first whose probe answers yes; else an error
// naming the machine and every backend's reason ("no topology plugin
// describes this machine (arch emu, family 0): neuron: ...; nccl: ...").
// When no plugin describes it, *declined (when given) receives each
// plugin's name and own reason, in the order they were asked.
struct Declined {
  std::string backend;  // "neuron"
  std::string why;      // its probe's answer
};
Result<const TopoBackend*> choose_system_backend(std::span<const TopoBackend> backends,
                                                 const nccom_topo_machine_t& machine,
                                                 const GraphSettings& settings,
                                                 std::vector<Declined>* declined = nullptr);

Result<NodeTopology> build_node_topology(std::span<const TopoBackend> backends,
                                         const nccom_topo_machine_t& machine,
                                         const nccom_topo_node_t& node,
                                         const GraphSettings& settings);

}  // namespace nccom::graphbuild
