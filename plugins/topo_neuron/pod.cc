#include "pod.h"

#include "fail.h"

#include <algorithm>
#include <map>
#include <string>

namespace nccom::topo_neuron {
namespace {

constexpr int kMaxPodNodes = 64;
constexpr long kPodSearchBudget = 1L << 16;

struct PodSearch {
  const PodGeometry& g;
  const std::vector<int>& ids;  // present positions, ascending
  bool wantCycle;
  long steps = 0;
  std::vector<int> path;
  std::vector<bool> used;

  bool rec() {
    if (++steps > kPodSearchBudget) return false;
    if (path.size() == ids.size())
      return !wantCycle || ids.size() < 3 || podNeighbours(g, path.back(), path.front());
    for (size_t i = 0; i < ids.size(); ++i) {
      if (used[i] || !podNeighbours(g, path.back(), ids[i])) continue;
      used[i] = true;
      path.push_back(ids[i]);
      if (rec()) return true;
      path.pop_back();
      used[i] = false;
    }
    return false;
  }
};

// Positions of one pod in fabric order.
std::vector<int> orderPod(const PodGeometry& g, const std::vector<int>& ids) {
  for (bool cycle : {true, false}) {
    PodSearch s{g, ids, cycle, 0, {ids.front()}, std::vector<bool>(ids.size(), false)};
    s.used[0] = true;
    if (s.rec()) return s.path;
  }
  return ids;
}

}  // namespace

PodGeometry podGeometry(Variant v) {
  const auto& s = platformSpec(v);
  return {s.pod, s.podNodes};
}

bool podNeighbours(const PodGeometry& g, int a, int b) {
  if (a == b) return false;
  switch (g.layout) {
    case PodLayout::None: return false;
    case PodLayout::AllToAll: return true;
    case PodLayout::Ring: {
      const int d = ((a - b) % g.podNodes + g.podNodes) % g.podNodes;
      return d == 1 || d == g.podNodes - 1;
    }
  }
  return false;
}

Result<std::vector<int>> podNodeOrder(const std::vector<PodNode>& nodes, const PodGeometry& g) {
  if (g.podNodes < 1 || g.podNodes > kMaxPodNodes)
    return fail(NRT_INVALID, "topo_neuron: pod size " + std::to_string(g.podNodes) +
                                 " out of range [1, " + std::to_string(kMaxPodNodes) + "]");
  std::map<int, std::map<int, int>> pods;  // podId -> podNodeId -> node
  for (const auto& n : nodes) {
    if (n.podNodeId < 0 || n.podNodeId >= g.podNodes)
      return fail(NRT_INVALID, "topo_neuron: node " + std::to_string(n.node) + " has podNodeId " +
                                   std::to_string(n.podNodeId) + ", outside a pod of " +
                                   std::to_string(g.podNodes));
    auto [it, fresh] = pods[n.podId].emplace(n.podNodeId, n.node);
    if (!fresh)
      return fail(NRT_INVALID, "topo_neuron: nodes " + std::to_string(it->second) + " and " +
                                   std::to_string(n.node) + " both claim position " +
                                   std::to_string(n.podNodeId) + " of pod " +
                                   std::to_string(n.podId));
  }
  std::vector<int> order;
  for (const auto& [podId, members] : pods) {
    std::vector<int> ids;
    for (const auto& m : members) ids.push_back(m.first);
    for (int id : orderPod(g, ids)) order.push_back(members.at(id));
  }
  return order;
}

}  // namespace nccom::topo_neuron
