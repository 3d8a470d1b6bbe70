#include "local_share.h"

#include <nccom/topo/graph.h>

#include <set>

namespace nccom::topo_nccl {

std::string LocalShare::rankList() const {
  std::string out;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i == 16) return out + ", ...";
    out += (i == 0 ? "" : ", ") + std::to_string(ranks[i]);
  }
  return out;
}

Status checkShare(const LocalShare& share) {
  auto bad = [](const std::string& what) {
    return make_error(NRT_INVALID, "topo_nccl: node share: " + what);
  };
  if (share.nLocal() < 1 || share.nLocal() > topo::kMaxLocalRanks) {
    return bad("n_local " + std::to_string(share.nLocal()) + " outside 1.." +
               std::to_string(topo::kMaxLocalRanks));
  }
  if (share.nNodes < 1) return bad("n_nodes " + std::to_string(share.nNodes) + " is not positive");
  if (share.node < 0 || share.node >= share.nNodes) {
    return bad("node " + std::to_string(share.node) + " outside 0.." +
               std::to_string(share.nNodes - 1));
  }
  if (share.nRanks < share.nLocal()) {
    return bad("n_ranks " + std::to_string(share.nRanks) + " is smaller than n_local " +
               std::to_string(share.nLocal()));
  }
  std::set<int> seen;
  for (const int r : share.ranks) {
    if (r < 0 || r >= share.nRanks) {
      return bad("local rank " + std::to_string(r) + " outside 0.." +
                 std::to_string(share.nRanks - 1));
    }
    if (!seen.insert(r).second) return bad("local rank " + std::to_string(r) + " listed twice");
  }
  for (const auto* list : {&share.devices, &share.cores}) {
    if (list->empty()) continue;
    if (list->size() != share.ranks.size()) return bad("device/core list does not match n_local");
    for (const int v : *list) {
      if (v < 0) return bad("negative device or core " + std::to_string(v));
    }
  }
  return {};
}

}  // namespace nccom::topo_nccl
