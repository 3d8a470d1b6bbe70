// The Graphviz view: one cluster per node (at most kMaxDrawnNodes, in ring
// order), its devices and NICs, the device links in grey, and each searched
// channel's ring as edges of its own colour. Hops inside one device are not
// drawn (they would be self-loops); inter-node hops go device -> exit NIC ->
// entry NIC -> device, the NICs the graph chose for that channel.
#include "render.h"

#include <algorithm>
#include <set>

namespace nccom::topotool {
namespace {

constexpr const char* kColours[] = {"red",    "blue",     "darkgreen", "orange",
                                    "purple", "brown",    "magenta",   "cyan4",
                                    "gold3",  "deeppink", "navy",      "olivedrab"};

std::string dev_id(int node, int dev) {
  return "n" + std::to_string(node) + "_d" + std::to_string(dev);
}
std::string nic_id(int node, int nic) {
  return "n" + std::to_string(node) + "_nic" + std::to_string(nic);
}

}  // namespace

std::string render_dot(const ToolResult& r) {
  const NodeModel& d = r.platform.node;
  const graphbuild::SimulatedCluster& c = r.cluster;
  const graphbuild::ClusterLayout& l = c.layout;
  const int drawn = std::min(kMaxDrawnNodes, l.n_nodes);
  std::set<int> shown(c.node_order.begin(), c.node_order.begin() + drawn);

  std::string o = "digraph nccom_topo {\n  compound=true;\n  node [fontname=\"Helvetica\"];\n";
  std::string label = d.platform + ", " + std::to_string(l.n_nodes) + " nodes x " +
                      std::to_string(r.cluster_request.ranks_per_node) +
                      " ranks, LNC=" + std::to_string(d.lnc) + ", " +
                      std::to_string(c.agreed_channels) + " channels (doubled copies not drawn)";
  if (drawn < l.n_nodes) {
    label += "; showing " + std::to_string(drawn) + " of " + std::to_string(l.n_nodes) +
             " nodes (the first in ring order)";
  }
  o += "  label=\"" + label + "\";\n  labelloc=t;\n";
  for (int n : shown) {
    o += "  subgraph cluster_node" + std::to_string(n) + " {\n    label=\"node " +
         std::to_string(n) + "\";\n    style=rounded;\n";
    for (int dev = 0; dev < d.n_devices; ++dev) {
      std::vector<int> ranks;
      for (int rk : l.node_ranks[n])
        if (l.rank_device[rk] == dev) ranks.push_back(rk);
      std::string text = "dev " + std::to_string(dev);
      if (!ranks.empty()) {
        text += "\\nranks " + std::to_string(ranks.front()) +
                (ranks.size() > 1 ? "-" + std::to_string(ranks.back()) : std::string());
      }
      o += "    " + dev_id(n, dev) + " [shape=box, label=\"" + text + "\"];\n";
    }
    for (const auto& nic : d.nics) {
      o += "    " + nic_id(n, nic.id) + " [shape=ellipse, style=filled, fillcolor=lightgrey, " +
           "label=\"nic " + std::to_string(nic.id) + "\"];\n";
    }
    for (const auto& link : d.links) {
      o += "    " + dev_id(n, link.a) + " -> " + dev_id(n, link.b) +
           " [dir=none, color=grey, label=\"" + link.locality +
           "\", fontcolor=grey, fontsize=8];\n";
    }
    for (const auto& nic : d.nics)
      for (int dev : nic.devices)
        o += "    " + nic_id(n, nic.id) + " -> " + dev_id(n, dev) +
             " [dir=none, color=grey, style=dashed];\n";
    o += "  }\n";
  }
  const int base = r.summary.rings.baseChannels;
  for (int ch = 0; ch < base && ch < r.summary.rings.nChannels; ++ch) {
    const std::vector<int>& ring = r.summary.rings.channels[ch].userRanks;
    const std::string attrs = std::string(" [color=") + kColours[ch % std::size(kColours)] +
                              ", label=\"c" + std::to_string(ch) + "\", fontsize=8];\n";
    for (size_t i = 0; i < ring.size(); ++i) {
      const int a = ring[i], b = ring[(i + 1) % ring.size()];
      const int na = l.rank_node[a], nb = l.rank_node[b];
      const int da = l.rank_device[a], db = l.rank_device[b];
      if (na == nb) {
        if (da != db && shown.count(na))
          o += "  " + dev_id(na, da) + " -> " + dev_id(na, db) + attrs;
        continue;
      }
      const int out = c.nodes[na].graph.inter[ch][1];
      const int in = c.nodes[nb].graph.inter[ch][0];
      const bool has_nics = !d.nics.empty();
      if (!has_nics) continue;  // no NIC to draw the hop through
      if (shown.count(na)) o += "  " + dev_id(na, da) + " -> " + nic_id(na, out) + attrs;
      if (shown.count(na) && shown.count(nb))
        o += "  " + nic_id(na, out) + " -> " + nic_id(nb, in) + attrs;
      if (shown.count(nb)) o += "  " + nic_id(nb, in) + " -> " + dev_id(nb, db) + attrs;
    }
  }
  o += "}\n";
  return o;
}

}  // namespace nccom::topotool
