// Nodes, edges and the priority DFS. Core expansion and getPaths are in
// core_paths.cc.
#include "search.h"

#include "fail.h"

#include <algorithm>

namespace nccom::topo_neuron {

bool NeuronEdge::tryIncreasePriority(int floor, int ceiling) {
  if (priority < floor || priority >= ceiling) return false;
  ++priority;
  return true;
}

void NeuronEdge::decreasePriority() {
  priority = std::max(0, priority - (intraMla ? kIntraMlaPenalty : kInterMlaPenalty));
}

bool NeuronNode::localsFullyVisited(const VcoreSet& visitedNodes) const {
  for (int p : mlaPeers)
    if (!visitedNodes.test(static_cast<size_t>(p))) return false;
  return true;
}

std::string formatList(const std::vector<int>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "}";
}

Result<std::vector<NeuronNode>> constructNodes(const PlatformDescription& d,
                                               const VcoreSet& available) {
  std::vector<NeuronNode> nodes;
  std::vector<int> nodeOfDevice(static_cast<size_t>(d.nDevices), -1);
  for (int v = 0; v < kMaxVcores; ++v) {
    if (!available.test(static_cast<size_t>(v))) continue;
    if (v >= d.nVcores()) {
      return fail(NRT_INVALID, "topo_neuron: vcore " + std::to_string(v) + " is not on platform " +
                                   d.name + " (it has " + std::to_string(d.nVcores()) +
                                   " vcores at LNC " + std::to_string(d.lnc) + ")");
    }
    const int dev = d.vcores[static_cast<size_t>(v)].device;
    if (nodeOfDevice[static_cast<size_t>(dev)] < 0) {
      nodeOfDevice[static_cast<size_t>(dev)] = static_cast<int>(nodes.size());
      nodes.push_back({dev, d.devices[static_cast<size_t>(dev)].mla, {}, {}, {}});
    }
    nodes[static_cast<size_t>(nodeOfDevice[static_cast<size_t>(dev)])].vcores.push_back(v);
  }
  if (nodes.empty()) return fail(NRT_INVALID, "topo_neuron: no available vcores to search");
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (size_t j = 0; j < nodes.size(); ++j) {
      if (i == j) continue;
      const bool sameMla = nodes[i].mla == nodes[j].mla;
      if (sameMla) nodes[i].mlaPeers.push_back(static_cast<int>(j));
      EdgeLocality loc;
      if (d.linked(nodes[i].device, nodes[j].device, &loc)) {
        nodes[i].edges.push_back(
            {static_cast<int>(i), static_cast<int>(j), loc, kInitialPriority, sameMla});
      }
    }
  }
  return nodes;
}

Topology::Topology(std::vector<NeuronNode> nodes, uint64_t budget)
    : nodes_(std::move(nodes)), budget_(budget) {}

// State of one DFS pass.
struct Topology::Dfs {
  VcoreSet visited;          // indexed by node
  std::vector<int> current;  // node indices on the path
  int start = 0;
  int maxDepth = 0;                    // number of nodes: a ring has this many hops
  int floor = 0;                       // edges below this priority are not offered
  std::vector<NeuronEdge*> committed;  // raised edges on the current path
  std::vector<bool> raised;
};

std::string Topology::deviceList() const {
  std::vector<int> devs;
  for (const auto& n : nodes_) devs.push_back(n.device);
  return formatList(devs);
}

std::vector<NeuronEdge*> Topology::orderedEdges(int node) {
  std::vector<NeuronEdge*> out;
  for (auto& e : nodes_[static_cast<size_t>(node)].edges) out.push_back(&e);
  std::stable_sort(out.begin(), out.end(), [](const NeuronEdge* a, const NeuronEdge* b) {
    if (a->locality != b->locality) return a->locality < b->locality;
    if (a->priority != b->priority) return a->priority > b->priority;
    return a->target < b->target;
  });
  return out;
}

// The path may close back to the start only once every node is on it, over
// a real edge the pass may use (priority at or above its floor), and only
// into a ring not found before.
bool Topology::isClosingCycle(const Dfs& s, int node, int depth) const {
  if (depth != s.maxDepth) return false;
  if (s.maxDepth > 1) {
    bool edge = false;
    for (const auto& e : nodes_[static_cast<size_t>(node)].edges)
      edge |= e.target == s.start && e.priority >= s.floor;
    if (!edge) return false;
  }
  return std::find(found_.begin(), found_.end(), s.current) == found_.end();
}

bool Topology::findPathRec(Dfs& s, int node, int depth) {
  if (++stats_.steps > budget_) {
    stats_.budgetExhausted = true;
    return false;
  }
  if (depth == s.maxDepth) return isClosingCycle(s, node, depth);
  // An MLA is left only once all of it is on the path (contiguous blocks).
  const bool mustStay = !nodes_[static_cast<size_t>(node)].localsFullyVisited(s.visited);
  for (NeuronEdge* e : orderedEdges(node)) {
    if (stats_.budgetExhausted) return false;
    if (s.visited.test(static_cast<size_t>(e->target))) continue;
    if (mustStay && !e->isIntraMLA()) continue;
    if (e->priority < s.floor) continue;
    const bool raised = e->tryIncreasePriority(s.floor, maxPriority_);
    s.visited.set(static_cast<size_t>(e->target));
    s.current.push_back(e->target);
    s.committed.push_back(e);
    s.raised.push_back(raised);
    if (findPathRec(s, e->target, depth + 1)) return true;
    s.raised.pop_back();
    s.committed.pop_back();
    s.current.pop_back();
    s.visited.reset(static_cast<size_t>(e->target));
    if (raised) e->undoIncrease();
  }
  return false;
}

Result<PathContainer> Topology::findPaths(int start, int max) {
  const int n = static_cast<int>(nodes_.size());
  if (start < 0 || start >= n)
    return fail(NRT_INVALID, "topo_neuron: search start node " + std::to_string(start) +
                                 " out of range [0, " + std::to_string(n) + ")");
  if (n > kMaxVcores) return fail(NRT_INVALID, "topo_neuron: more than 128 search nodes");
  // A node with fewer than two neighbours can never be inside a ring of
  // three or more; say so at once instead of searching.
  bool hopeless = false;
  for (const auto& nd : nodes_) hopeless |= n >= 3 && nd.edges.size() < 2;
  hopeless |= n == 2 && nodes_[0].edges.empty();
  for (int k = 0; k < max && !hopeless; ++k) {
    bool found = false;
    // Pass 1 offers only directed edges no accepted ring used; pass 2 all.
    for (int floor : {kInitialPriority, 0}) {
      Dfs s;
      s.start = start;
      s.maxDepth = n;
      s.floor = floor;
      s.visited.set(static_cast<size_t>(start));
      s.current.push_back(start);
      if (findPathRec(s, start, 1)) {
        for (size_t i = 0; i < s.committed.size(); ++i) {
          if (s.raised[i]) s.committed[i]->undoIncrease();
          s.committed[i]->decreasePriority();
        }
        if (n > 1) {  // the closing edge counts as used too
          for (auto& e : nodes_[static_cast<size_t>(s.current.back())].edges)
            if (e.target == start) e.decreasePriority();
        }
        found_.push_back(s.current);
        found = true;
        break;
      }
      if (stats_.budgetExhausted) break;
    }
    if (!found) break;
  }
  if (!found_.empty()) return found_;
  if (stats_.budgetExhausted) {
    return fail(NRT_RESOURCE, "topo_neuron: search budget of " + std::to_string(budget_) +
                                  " steps exhausted before a ring over the platform links "
                                  "for devices " +
                                  deviceList() + " was found");
  }
  return fail(NRT_INVALID, "no ring over the platform links for devices " + deviceList());
}

}  // namespace nccom::topo_neuron
