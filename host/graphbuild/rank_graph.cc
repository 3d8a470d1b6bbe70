#include "graphbuild/rank_graph.h"

#include "rings/channels.h"
#include "rings/fragment.h"
#include "rings/stage.h"

#include <algorithm>
#include <cstring>
#include <map>

namespace nccom::graphbuild {

ClusterLayout make_layout(std::span<const RankIdentity> ranks) {
  ClusterLayout l;
  l.n_ranks = static_cast<int>(ranks.size());
  std::map<uint64_t, int> node_of_host;
  for (int r = 0; r < l.n_ranks; ++r) {
    auto [it, fresh] = node_of_host.emplace(ranks[r].host_hash, l.n_nodes);
    if (fresh) {
      ++l.n_nodes;
      l.nodes_first_rank.push_back(r);
      l.node_ranks.emplace_back();
    }
    l.rank_node.push_back(it->second);
    l.node_ranks[it->second].push_back(r);
    l.rank_device.push_back(ranks[r].device);
    l.rank_mla.push_back(ranks[r].mla_idx);
    l.rank_pod_node.push_back(ranks[r].pod_node_id);
  }
  l.rank_core.assign(l.n_ranks, 0);
  for (const auto& members : l.node_ranks) {
    std::map<int, int> next_core;  // device -> next free core
    for (int r : members) l.rank_core[r] = next_core[l.rank_device[r]]++;
  }
  return l;
}

NodeShare::NodeShare(const ClusterLayout& l, int node) {
  for (int r : l.node_ranks[static_cast<size_t>(node)]) {
    ranks.push_back(r);
    devices.push_back(l.rank_device[r]);
    cores.push_back(l.rank_core[r]);
  }
  view.struct_size = sizeof view;
  view.n_ranks = l.n_ranks;
  view.n_nodes = l.n_nodes;
  view.node = node;
  view.n_local = static_cast<int32_t>(ranks.size());
  view.local_ranks = ranks.data();
  view.local_devices = devices.data();
  view.local_cores = cores.data();
}

bool is_switch_v1(const nccom_topo_machine_t& machine) {
  constexpr uint32_t kFamilyTrn3 = 10;
  return machine.pod_type == NEC_POD_TYPE_SWITCH && machine.instance_family == kFamilyTrn3;
}

Result<std::vector<int>> node_order(std::span<const TopoBackend> backends,
                                    const std::string& describing_backend,
                                    const nccom_topo_machine_t& machine, const ClusterLayout& l) {
  std::vector<int> order(static_cast<size_t>(l.n_nodes));
  for (int n = 0; n < l.n_nodes; ++n) order[n] = n;
  if (machine.pod_type == NEC_POD_TYPE_NONE || l.n_nodes <= 1) return order;
  std::vector<int> pods;
  for (int n = 0; n < l.n_nodes; ++n) pods.push_back(l.rank_pod_node[l.nodes_first_rank[n]]);
  for (const TopoBackend& b : backends) {
    if (b.name() == describing_backend) return b.order_nodes(machine, pods);
  }
  return order;
}

Result<rings::GraphSummary> build_rank_graph(const RankGraphInput& in,
                                             const AllGather& all_gather) {
  const ClusterLayout& l = *in.layout;
  topo::TopoGraph graph = *in.graph;

  // 1. One channel count for everyone.
  std::vector<int32_t> counts(static_cast<size_t>(l.n_ranks), 0);
  counts[static_cast<size_t>(in.my_rank)] = graph.nChannels;
  if (Status s = all_gather(counts.data(), sizeof(int32_t)); !s) return s.take_error();
  int agreed = rings::kMaxChannels;
  for (int r = 0; r < l.n_ranks; ++r) {
    if (counts[r] < 1 || counts[r] > rings::kMaxChannels) {
      return make_error(NRT_INVALID, "rank " + std::to_string(r) + " reported " +
                                         std::to_string(counts[r]) +
                                         " ring channels; 1 to 32 are possible");
    }
    agreed = std::min(agreed, static_cast<int>(counts[r]));
  }
  if (agreed < graph.nChannels) {
    graph.nChannels = agreed;
    graph.intra.resize(static_cast<size_t>(agreed) * graph.nLocal);
    graph.inter.resize(static_cast<size_t>(agreed));
  }

  // 2. Preset, gather the fragments, decode them all (untrusted bytes).
  auto mine = rings::preset(graph, in.my_rank, in.kanga_paths);
  if (!mine) return mine.take_error();
  std::vector<uint8_t> wire(static_cast<size_t>(l.n_ranks) * rings::kFragmentBytes);
  const auto bytes = rings::encodeFragment(*mine);
  std::memcpy(wire.data() + static_cast<size_t>(in.my_rank) * rings::kFragmentBytes, bytes.data(),
              bytes.size());
  if (Status s = all_gather(wire.data(), rings::kFragmentBytes); !s) return s.take_error();
  std::vector<rings::TopoRanks> fragments;
  fragments.reserve(static_cast<size_t>(l.n_ranks));
  for (int r = 0; r < l.n_ranks; ++r) {
    auto f = rings::decodeFragment(
        std::span<const uint8_t>(wire.data() + static_cast<size_t>(r) * rings::kFragmentBytes,
                                 rings::kFragmentBytes),
        r, l.n_ranks);
    if (!f) return f.take_error();
    fragments.push_back(*f);
  }

  // 3. Stitch.
  rings::StageInput stage;
  stage.postset.fragments = fragments;
  stage.postset.nodesFirstRank = l.nodes_first_rank;
  stage.postset.nodeOrder = in.node_order;
  stage.postset.myRank = in.my_rank;
  stage.postset.nRanks = l.n_ranks;
  stage.postset.nChannels = agreed;
  stage.rankMla = l.rank_mla;
  stage.rankNode = l.rank_node;
  stage.switchV1 = in.switch_v1;
  stage.nKangaPaths = static_cast<int>(in.kanga_paths.size());
  stage.localKanga = in.kanga_paths;
  stage.nodeRanks = l.node_ranks[static_cast<size_t>(l.rank_node[in.my_rank])];
  stage.strictMla = in.strict_mla;
  auto summary = rings::runPostsetStage(stage);
  if (!summary) return summary;
  // The NIC of every ring channel, from the searched graph (doubled channels
  // wrap onto the searched ones, as ncclTopoGetNetDev does).
  for (int c = 0; c < summary->rings.nChannels; ++c) {
    auto nic = rings::netDevForChannel(&graph, in.my_rank, c);
    summary->channelNic.push_back(nic ? *nic : -1);
  }
  return summary;
}

}  // namespace nccom::graphbuild
