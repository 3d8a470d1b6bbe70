// The text view and the XML texts.
#include "render.h"

#include <nccom/topo/graph_xml.h>
#include <nccom/topo/xml.h>

namespace nccom::topotool {

std::string join(const std::vector<int>& v, const char* sep) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : sep) + std::to_string(x);
  return s;
}

const char* pod_name(int32_t pod_type) {
  switch (pod_type) {
    case 1: return "P2P";
    case 2: return "SWITCH";
    default: return "none";
  }
}

std::vector<int> node_channel(const ToolResult& r, int node, int c) {
  const topo::TopoGraph& g = r.cluster.nodes[node].graph;
  const int* row = g.channel(c);
  return std::vector<int>(row, row + g.nLocal);
}

Result<std::string> system_xml_text(const ToolResult& r, int node) {
  const graphbuild::NodeTopology& t = r.cluster.nodes.at(node);
  auto doc = topo::parseXml(t.system_xml, "system XML of topology plugin " + t.backend);
  if (!doc) return doc.take_error();
  return topo::writeXml(*doc->root);
}

Result<std::string> graph_xml_text(const ToolResult& r, int node) {
  const graphbuild::NodeTopology& t = r.cluster.nodes.at(node);
  auto doc = topo::graphsToXml({&t.graph}, t.system);
  if (!doc) return doc.take_error();
  return topo::writeXml(*doc->root);
}

namespace {

std::string text_configuration(const ToolResult& r, int my_node) {
  const ConfigSummary& cfg = r.config;
  std::string o = "== configuration\n";
  o += "config file: " +
       (cfg.file.empty() ? std::string("none (built-in defaults)")
                         : cfg.file + " (" + cfg.file_by + ")") +
       (cfg.cluster.empty() ? std::string()
                            : "; cluster " + cfg.cluster + " (" + cfg.cluster_by + ")") +
       "\n";
  o += "search: " + r.cluster.nodes[my_node].graph_origin + "\n";
  std::string dirs;
  for (const std::string& d : cfg.plugin_dirs) dirs += (dirs.empty() ? "" : ", ") + d;
  o += "plugin directories: " + dirs + "\n";
  for (const KnobShown& k : cfg.knobs)
    o += "  " + k.key + " = \"" + k.value + "\" (" + k.source + ")\n";
  return o;
}

std::string text_platform(const ToolResult& r) {
  const NodeModel& d = r.platform.node;
  const PlatformEntry& s = r.platform.entry;
  const nccom_topo_machine_t& m = r.platform.machine;
  std::string o = "== platform\n";
  o += "platform " + s.name + " (" + s.codename + " " + s.generation + "): instance family " +
       std::to_string(m.instance_family) + ", arch " + m.arch_name + ", pod " +
       pod_name(m.pod_type) + " of " + std::to_string(m.pod_size) + " nodes\n";
  o += "per node: " + std::to_string(d.n_devices) + " devices, " +
       std::to_string(d.cores_per_device) + " NeuronCores each, LNC=" + std::to_string(d.lnc) +
       " -> " + std::to_string(d.vcores_per_device) + " logical cores per device, " +
       std::to_string(d.n_vcores()) + " per node, " + std::to_string(d.nics.size()) + " NICs, " +
       std::to_string(d.links.size()) + " device links\n";
  for (const auto& dev : d.devices) {
    o += "  device " + std::to_string(dev.id) + ": mla " + std::to_string(dev.mla) + ", numa " +
         std::to_string(dev.numa) + ", pci switch " + std::to_string(dev.pci_switch) +
         ", logical cores " + join(dev.vcores) + "\n";
  }
  for (const auto& nic : d.nics) {
    o += "  nic " + std::to_string(nic.id) + ": pci switch " + std::to_string(nic.pci_switch) +
         ", numa " + std::to_string(nic.numa) + ", devices " + join(nic.devices) + "\n";
  }
  for (const auto& l : d.links) {
    o += "  link " + std::to_string(l.a) + " - " + std::to_string(l.b) + " " + l.locality + "\n";
  }
  return o;
}

// The cluster's shape and where this node's system and graph came from.
std::string text_origin(const ToolResult& r, int my_node) {
  const graphbuild::SimulatedCluster& c = r.cluster;
  std::string o = "== cluster\n";
  o += std::to_string(c.layout.n_nodes) + " nodes x " +
       std::to_string(r.cluster_request.ranks_per_node) +
       " ranks = " + std::to_string(c.layout.n_ranks) + " ranks; node ring order " +
       join(c.node_order) + "\n";
  o += "== origin\n";
  const graphbuild::NodeTopology& t = c.nodes[my_node];
  o += "system: from topology plugin " + t.backend +
       (r.topo_file.empty() ? std::string() : " (topology file " + r.topo_file + ")") + ": " +
       std::to_string(t.system.count(topo::NodeType::GPU)) + " cores, " +
       std::to_string(t.system.count(topo::NodeType::NET)) + " NICs\n";
  o += "graph: " + t.graph_origin + "; " + std::to_string(t.graph.nChannels) +
       " channels searched, " + std::to_string(c.agreed_channels) + " agreed by all nodes, " +
       std::to_string(r.summary.rings.nChannels) + " after doubling\n";
  return o;
}

std::string text_rings(const ToolResult& r, int my_node) {
  const graphbuild::SimulatedCluster& c = r.cluster;
  std::string o =
      "== node " + std::to_string(my_node) + " rings (channel: ring order | NIC in -> out)\n";
  for (int ch = 0; ch < c.agreed_channels; ++ch) {
    const auto& nic = c.nodes[my_node].graph.inter[ch];
    char head[32];
    std::snprintf(head, sizeof head, "channel %02d: ", ch);
    o += head + join(node_channel(r, my_node, ch)) + " | nic " + std::to_string(nic[0]) + " -> " +
         std::to_string(nic[1]) + "\n";
  }
  o += "== global rings of rank " + std::to_string(r.summary.rank) +
       " (channel: ring order | its NIC)\n";
  for (int ch = 0; ch < r.summary.rings.nChannels; ++ch) {
    const auto& rc = r.summary.rings.channels[ch];
    char head[64];
    std::snprintf(head, sizeof head, "Channel %02d/%02d : ", ch, r.summary.rings.nChannels);
    const int nic = static_cast<size_t>(ch) < r.summary.channelNic.size()
                        ? r.summary.channelNic[static_cast<size_t>(ch)]
                        : -1;
    o += head + join(rc.userRanks) + (rc.duplicate ? " (doubled)" : "") + " | nic " +
         std::to_string(nic) + "\n";
  }
  return o;
}

// The kangaRing paths and the MLA cycles of this node.
std::string text_paths(const ToolResult& r, int my_node) {
  std::string o = "== kangaRing paths: " + std::to_string(r.summary.kangaRing.size()) + "\n";
  for (size_t k = 0; k < r.summary.kangaRing.size(); ++k) {
    std::vector<int> path;
    for (int x : r.summary.kangaRing[k])
      if (x >= 0) path.push_back(x);
    o += "kangaring path[" + std::to_string(k) + "] = " + join(path) + "\n";
  }
  o += "== MLA cycles: " + std::to_string(r.summary.mla.cycles.size()) + " cycles over " +
       std::to_string(r.summary.mla.nMlaInCycle) + " MLAs of node " + std::to_string(my_node) +
       "\n";
  for (size_t k = 0; k < r.summary.mla.cycles.size(); ++k) {
    o += "mla cycle " + std::to_string(k) + ": " + join(r.summary.mla.cycles[k]) + "\n";
  }
  for (const auto& v : r.summary.mla.violations) o += "mla violation: " + v.message() + "\n";
  return o;
}

}  // namespace

std::string render_text(const ToolResult& r) {
  const int my_node = r.cluster.layout.rank_node[r.summary.rank];
  return text_configuration(r, my_node) + text_platform(r) + text_origin(r, my_node) +
         text_rings(r, my_node) + text_paths(r, my_node);
}

}  // namespace nccom::topotool
