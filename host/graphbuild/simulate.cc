#include "graphbuild/simulate.h"

#include "rings/fragment.h"

#include <algorithm>
#include <cstring>

namespace nccom::graphbuild {

Result<SimulatedCluster> simulate_cluster(std::span<const TopoBackend> backends,
                                          const ClusterRequest& req) {
  if (req.n_nodes < 1 || req.ranks_per_node < 1 || req.cores_per_device < 1) {
    return make_error(NRT_INVALID,
                      "a simulated cluster needs at least one node, one rank per "
                      "node and one core per device");
  }
  if (!req.pod_node_ids.empty() && static_cast<int>(req.pod_node_ids.size()) != req.n_nodes) {
    return make_error(NRT_INVALID, "pod_node_ids has " + std::to_string(req.pod_node_ids.size()) +
                                       " entries for " + std::to_string(req.n_nodes) + " nodes");
  }
  SimulatedCluster out;
  out.machine = req.machine;
  std::vector<RankIdentity> ids;
  for (int n = 0; n < req.n_nodes; ++n) {
    for (int i = 0; i < req.ranks_per_node; ++i) {
      RankIdentity id;
      id.host_hash = 0x5100000000ull + static_cast<uint64_t>(n);
      id.device = i / req.cores_per_device;
      id.mla_idx = id.device;
      id.pod_node_id = req.pod_node_ids.empty() ? n : req.pod_node_ids[n];
      ids.push_back(id);
    }
  }
  out.layout = make_layout(ids);
  const ClusterLayout& l = out.layout;

  for (int n = 0; n < req.n_nodes; ++n) {
    const NodeShare share(l, n);
    GraphSettings settings = req.settings;
    settings.dump = settings.dump && n == 0;
    auto t = build_node_topology(backends, req.machine, share.view, settings);
    if (!t) {
      Error e = t.take_error();
      e.message = "node " + std::to_string(n) + ": " + e.message;
      return e;
    }
    out.nodes.push_back(std::move(*t));
  }

  auto order = node_order(backends, out.nodes[0].backend, req.machine, l);
  if (!order) return order.take_error();
  out.node_order = std::move(*order);

  out.agreed_channels = rings::kMaxChannels;
  for (const NodeTopology& t : out.nodes)
    out.agreed_channels = std::min(out.agreed_channels, t.graph.nChannels);
  out.fragments.resize(static_cast<size_t>(l.n_ranks));
  for (int r = 0; r < l.n_ranks; ++r) {
    topo::TopoGraph g = out.nodes[l.rank_node[r]].graph;
    g.nChannels = out.agreed_channels;
    g.intra.resize(static_cast<size_t>(g.nChannels) * g.nLocal);
    g.inter.resize(static_cast<size_t>(g.nChannels));
    const bool switch_v1 = is_switch_v1(req.machine);
    auto f = rings::preset(
        g, r, switch_v1 ? out.nodes[l.rank_node[r]].kanga_paths : std::vector<std::vector<int>>{});
    if (!f) return f.take_error();
    const auto bytes = rings::encodeFragment(*f);
    out.fragments[r].assign(bytes.begin(), bytes.end());
  }
  return out;
}

Result<rings::GraphSummary> simulate_rank(const SimulatedCluster& c, int rank) {
  if (rank < 0 || rank >= c.layout.n_ranks) {
    return make_error(NRT_INVALID, "rank " + std::to_string(rank) +
                                       " is not in the simulated "
                                       "cluster of " +
                                       std::to_string(c.layout.n_ranks) + " ranks");
  }
  // The communicator's two all-gathers, answered from what every rank of
  // the simulated cluster contributes.
  int call = 0;
  AllGather gather = [&](void* data, std::size_t per_rank) -> Status {
    auto* out = static_cast<uint8_t*>(data);
    for (int r = 0; r < c.layout.n_ranks; ++r) {
      if (call == 0 && per_rank == sizeof(int32_t)) {
        const int32_t n = c.nodes[c.layout.rank_node[r]].graph.nChannels;
        std::memcpy(out + r * per_rank, &n, sizeof n);
      } else if (call == 1 && per_rank == rings::kFragmentBytes) {
        std::memcpy(out + r * per_rank, c.fragments[r].data(), per_rank);
      } else {
        return make_error(NRT_FAILURE, "simulated all-gather: unexpected call " +
                                           std::to_string(call) + " of " +
                                           std::to_string(per_rank) + " bytes per rank");
      }
    }
    ++call;
    return {};
  };
  RankGraphInput in;
  in.my_rank = rank;
  in.layout = &c.layout;
  in.graph = &c.nodes[c.layout.rank_node[rank]].graph;
  in.node_order = c.node_order;
  in.switch_v1 = is_switch_v1(c.machine);
  if (in.switch_v1) in.kanga_paths = c.nodes[c.layout.rank_node[rank]].kanga_paths;
  return build_rank_graph(in, gather);
}

}  // namespace nccom::graphbuild
