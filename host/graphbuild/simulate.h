// A whole cluster's graph computed in one process, without sockets: every
// node's topology through the real plugins, every rank's fragment, and any
// rank's rings through the same cross-rank code the communicator runs (its
// all-gathers answered from the precomputed fragments). nccom-topo, the
// topology tests and the graph-build benchmark use it.
#pragma once

#include "graphbuild/node_topology.h"
#include "graphbuild/rank_graph.h"

#include <cstdint>
#include <vector>

namespace nccom::graphbuild {

struct ClusterRequest {
  nccom_topo_machine_t machine{};  // the same on every node
  int n_nodes = 1;
  int ranks_per_node = 1;
  int cores_per_device = 1;       // logical cores per device: rank -> (device, core)
  std::vector<int> pod_node_ids;  // per node; empty: node n is pod node n
  GraphSettings settings;
};

struct SimulatedCluster {
  ClusterLayout layout;
  nccom_topo_machine_t machine{};
  std::vector<NodeTopology> nodes;  // one per node
  std::vector<int> node_order;      // ring order over nodes
  int agreed_channels = 0;
  std::vector<std::vector<uint8_t>> fragments;  // every rank's 960-byte fragment
};

// Ranks are numbered node-major: node n holds ranks n*R .. n*R+R-1, local
// rank i on device i / cores_per_device, core i % cores_per_device.
Result<SimulatedCluster> simulate_cluster(std::span<const TopoBackend> backends,
                                          const ClusterRequest& request);

// One rank's rings, kangaRing paths and MLA cycles.
Result<rings::GraphSummary> simulate_rank(const SimulatedCluster& cluster, int rank);

}  // namespace nccom::graphbuild
