// The JSON view: the facts of the text view, one object.
#include "render.h"

#include <cstdio>

namespace nccom::topotool {
namespace {

std::string quoted(const std::string& s) {
  std::string o = "\"";
  for (unsigned char ch : s) {
    if (ch == '"' || ch == '\\') {
      o += '\\';
      o += static_cast<char>(ch);
    } else if (ch < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", ch);
      o += buf;
    } else {
      o += static_cast<char>(ch);
    }
  }
  return o + "\"";
}

std::string array(const std::vector<int>& v) { return "[" + join(v, ",") + "]"; }

std::string json_config(const ToolResult& r, int my_node) {
  const ConfigSummary& cfg = r.config;
  std::string o =
      "  \"config\": {\"file\": " + quoted(cfg.file) + ", \"file_by\": " + quoted(cfg.file_by) +
      ", \"cluster\": " + quoted(cfg.cluster) + ", \"cluster_by\": " + quoted(cfg.cluster_by) +
      ", \"search\": " + quoted(r.cluster.nodes[my_node].graph_origin) +
      ",\n    \"plugin_dirs\": [";
  for (size_t i = 0; i < cfg.plugin_dirs.size(); ++i)
    o += std::string(i ? ", " : "") + quoted(cfg.plugin_dirs[i]);
  o += "],\n    \"knobs\": [";
  for (size_t i = 0; i < cfg.knobs.size(); ++i) {
    o += std::string(i ? ",\n      " : "\n      ") + "{\"key\": " + quoted(cfg.knobs[i].key) +
         ", \"value\": " + quoted(cfg.knobs[i].value) +
         ", \"source\": " + quoted(cfg.knobs[i].source) + "}";
  }
  return o + "]},\n";
}

// "platform" and "node".
std::string json_platform(const ToolResult& r) {
  const NodeModel& d = r.platform.node;
  const PlatformEntry& s = r.platform.entry;
  const nccom_topo_machine_t& m = r.platform.machine;
  std::string o = "  \"platform\": {\"name\": " + quoted(s.name) +
                  ", \"codename\": " + quoted(s.codename) +
                  ", \"generation\": " + quoted(s.generation) +
                  ", \"instance_family\": " + std::to_string(m.instance_family) +
                  ", \"arch_name\": " + quoted(m.arch_name) +
                  ", \"pod_type\": " + quoted(pod_name(m.pod_type)) +
                  ", \"pod_size\": " + std::to_string(m.pod_size) + "},\n";
  o += "  \"node\": {\"devices\": " + std::to_string(d.n_devices) +
       ", \"cores_per_device\": " + std::to_string(d.cores_per_device) +
       ", \"lnc\": " + std::to_string(d.lnc) +
       ", \"vcores_per_device\": " + std::to_string(d.vcores_per_device) +
       ", \"vcores\": " + std::to_string(d.n_vcores()) + ",\n    \"nics\": [";
  for (size_t i = 0; i < d.nics.size(); ++i) {
    o += std::string(i ? ", " : "") + "{\"id\": " + std::to_string(d.nics[i].id) +
         ", \"devices\": " + array(d.nics[i].devices) + "}";
  }
  o += "],\n    \"links\": [";
  for (size_t i = 0; i < d.links.size(); ++i) {
    o += std::string(i ? ", " : "") + "{\"a\": " + std::to_string(d.links[i].a) +
         ", \"b\": " + std::to_string(d.links[i].b) +
         ", \"locality\": " + quoted(d.links[i].locality) + "}";
  }
  return o + "]},\n";
}

// "cluster", "origin" and "node_rings".
std::string json_cluster(const ToolResult& r, int my_node) {
  const graphbuild::SimulatedCluster& c = r.cluster;
  const graphbuild::NodeTopology& t = c.nodes[my_node];
  std::string o = "  \"cluster\": {\"nodes\": " + std::to_string(c.layout.n_nodes) +
                  ", \"ranks_per_node\": " + std::to_string(r.cluster_request.ranks_per_node) +
                  ", \"ranks\": " + std::to_string(c.layout.n_ranks) +
                  ", \"node_order\": " + array(c.node_order) + "},\n";
  o += "  \"origin\": {\"system_backend\": " + quoted(t.backend) +
       ", \"topo_file\": " + quoted(r.topo_file) + ", \"graph\": " + quoted(t.graph_origin) +
       ", \"channels_searched\": " + std::to_string(t.graph.nChannels) +
       ", \"channels_agreed\": " + std::to_string(c.agreed_channels) + "},\n";
  o += "  \"node_rings\": {\"node\": " + std::to_string(my_node) + ", \"channels\": [";
  for (int ch = 0; ch < c.agreed_channels; ++ch) {
    const auto& nic = t.graph.inter[ch];
    o += std::string(ch ? ",\n    " : "\n    ") +
         "{\"ranks\": " + array(node_channel(r, my_node, ch)) +
         ", \"nic_in\": " + std::to_string(nic[0]) + ", \"nic_out\": " + std::to_string(nic[1]) +
         "}";
  }
  return o + "]},\n";
}

// "rings", "kangaring" and "mla_cycles".
std::string json_rings(const ToolResult& r) {
  std::string o = "  \"rings\": {\"rank\": " + std::to_string(r.summary.rank) +
                  ", \"base_channels\": " + std::to_string(r.summary.rings.baseChannels) +
                  ", \"channels\": [";
  for (int ch = 0; ch < r.summary.rings.nChannels; ++ch) {
    const auto& rc = r.summary.rings.channels[ch];
    o += std::string(ch ? ",\n    " : "\n    ") + "{\"prev\": " + std::to_string(rc.prev) +
         ", \"next\": " + std::to_string(rc.next) +
         ", \"duplicate\": " + (rc.duplicate ? "true" : "false") + ", \"nic\": " +
         std::to_string(static_cast<size_t>(ch) < r.summary.channelNic.size()
                            ? r.summary.channelNic[static_cast<size_t>(ch)]
                            : -1) +
         ", \"ranks\": " + array(rc.userRanks) + "}";
  }
  o += "]},\n  \"kangaring\": [";
  for (size_t k = 0; k < r.summary.kangaRing.size(); ++k) {
    std::vector<int> path;
    for (int x : r.summary.kangaRing[k])
      if (x >= 0) path.push_back(x);
    o += std::string(k ? ", " : "") + array(path);
  }
  o += "],\n  \"mla_cycles\": {\"mlas\": " + std::to_string(r.summary.mla.nMlaInCycle) +
       ", \"cycles\": [";
  for (size_t k = 0; k < r.summary.mla.cycles.size(); ++k) {
    o += std::string(k ? ", " : "") + array(r.summary.mla.cycles[k]);
  }
  o += "], \"violations\": [";
  for (size_t k = 0; k < r.summary.mla.violations.size(); ++k) {
    o += std::string(k ? ", " : "") + quoted(r.summary.mla.violations[k].message());
  }
  return o + "]}\n";
}

}  // namespace

std::string render_json(const ToolResult& r) {
  const int my_node = r.cluster.layout.rank_node[r.summary.rank];
  return "{\n" + json_config(r, my_node) + json_platform(r) + json_cluster(r, my_node) +
         json_rings(r) + "}\n";
}

}  // namespace nccom::topotool
