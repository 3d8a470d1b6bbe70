// The cross-rank half of neuronBuildGraphComm: agree on one channel count,
// preset this rank's fragment, all-gather the 960-byte fragments, stitch the
// rings. The all-gather is passed in, so the same code runs over the
// communicator's bootstrap and, in nccom-topo and the tests, over an in-memory
// exchange of a simulated cluster.
#pragma once

#include "graphbuild/topo_backend.h"
#include "rings/summary.h"

#include <nccom/topo/graph.h>
#include <nccom/topo_plugin.h>
#include <nccom/util/result.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace nccom::graphbuild {

// Where every rank sits, from the communicator's peer records.
struct ClusterLayout {
  int n_ranks = 0;
  int n_nodes = 0;
  std::vector<int> rank_node;                // node index of each rank
  std::vector<int> nodes_first_rank;         // lowest rank of each node
  std::vector<std::vector<int>> node_ranks;  // each node's ranks, ascending
  std::vector<int> rank_device;              // runtime device of each rank
  std::vector<int> rank_core;                // logical core of each rank within its device
  std::vector<int> rank_mla;                 // mla_idx of each rank
  std::vector<int> rank_pod_node;            // pod node id of each rank
};

struct RankIdentity {
  uint64_t host_hash = 0;
  int device = 0;
  int mla_idx = 0;
  int pod_node_id = 0;
};

// Nodes are numbered in order of their lowest rank; a rank's logical core is
// its position among the ranks of its node on the same device, by rank.
ClusterLayout make_layout(std::span<const RankIdentity> ranks);

// One node's share of the communicator as a topology plugin receives it;
// `view` points into the vectors, so a NodeShare is neither copied nor moved.
struct NodeShare {
  std::vector<int32_t> ranks, devices, cores;
  nccom_topo_node_t view{};
  NodeShare(const ClusterLayout& layout, int node);
  NodeShare(const NodeShare&) = delete;
  NodeShare& operator=(const NodeShare&) = delete;
};

// Trn3 on a NeuronSwitch-v1 pod (neuronIsTrn3SwitchV1Family): the kangaRing
// platform.
bool is_switch_v1(const nccom_topo_machine_t& machine);

// The ring order over nodes (the pod branch of ncclTopoPostset): asked of the
// backend that described the nodes when the machine is in a pod and there
// is more than one node; node index order otherwise.
Result<std::vector<int>> node_order(std::span<const TopoBackend> backends,
                                    const std::string& describing_backend,
                                    const nccom_topo_machine_t& machine,
                                    const ClusterLayout& layout);

// Every rank contributes `per_rank` bytes at data + rank * per_rank and
// receives everyone's (neuronBootstrapAllGather's contract).
using AllGather = std::function<Status(void* data, std::size_t per_rank)>;

struct RankGraphInput {
  int my_rank = 0;
  const ClusterLayout* layout = nullptr;
  const topo::TopoGraph* graph = nullptr;  // this node's graph
  std::vector<int> node_order;             // ring order over nodes; empty = node index order
  bool switch_v1 = false;
  std::vector<std::vector<int>> kanga_paths;  // this node's kangaRing paths (Switch-V1)
  bool strict_mla = false;
};

// Two all-gathers: the channel counts (every rank uses the minimum, as
// upstream does across nodes whose searches differ), then the fragments.
Result<rings::GraphSummary> build_rank_graph(const RankGraphInput& in, const AllGather& all_gather);

}  // namespace nccom::graphbuild
