#include "graphbuild/node_topology.h"

#include "log/log.h"

#include <nccom/topo/graph_xml.h>
#include <nccom/topo/xml.h>

#include <algorithm>

namespace nccom::graphbuild {
namespace {

std::string join_reasons(const std::vector<std::string>& reasons) {
  std::string out;
  for (const auto& r : reasons) out += (out.empty() ? "" : "; ") + r;
  return out;
}

}  // namespace

Result<const TopoBackend*> choose_system_backend(std::span<const TopoBackend> backends,
                                                 const nccom_topo_machine_t& machine,
                                                 const GraphSettings& settings,
                                                 std::vector<Declined>* declined) {
  if (backends.empty()) {
    return make_error(NRT_FAILURE,
                      "no topology plugin is loaded (topology.plugins lists none "
                      "that could be opened; see the WARN lines above)");
  }
  std::vector<std::string> reasons;
  for (const TopoBackend& b : backends) {
    if (settings.topo_file_set && b.name() != "nccl") continue;
    std::string why;
    if (b.probe(machine, &why)) return &b;
    reasons.push_back(b.name() + ": " + why);
    if (declined != nullptr) declined->push_back({b.name(), why});
  }
  if (settings.topo_file_set && reasons.empty()) {
    return make_error(NRT_FAILURE,
                      "NCCL_TOPO_FILE (topology.file) is set, but the topology "
                      "plugin nccl that reads it is not loaded; add \"topo_nccl\" to "
                      "topology.plugins");
  }
  return make_error(NRT_FAILURE, std::string("no topology plugin describes this machine (arch ") +
                                     machine.arch_name + ", family " +
                                     std::to_string(machine.instance_family) +
                                     "): " + join_reasons(reasons));
}

namespace {

// Parses the system, drops the GPUs of ranks that are not on this node (a
// topology file may describe more cores than the communicator uses; the
// graph holds exactly the local ranks), then computes the paths.
Result<topo::TopoSystem> parse_system(const std::string& text, const std::string& source,
                                      const topo::PathSettings& paths,
                                      const nccom_topo_node_t& node) {
  auto doc = topo::parseXml(text, source);
  if (!doc) return doc.take_error();
  auto system = topo::buildSystem(*doc);
  if (!system) return system.take_error();
  const std::vector<int> local(node.local_ranks, node.local_ranks + node.n_local);
  for (int g = system->count(topo::NodeType::GPU) - 1; g >= 0; --g) {
    const int rank = system->of(topo::NodeType::GPU)[static_cast<size_t>(g)].gpu.rank;
    if (std::find(local.begin(), local.end(), rank) == local.end()) {
      topo::removeNode(*system, topo::NodeRef{topo::NodeType::GPU, g});
    }
  }
  if (Status s = topo::computePaths(*system, paths); !s) return s.take_error();
  topo::computeSearchWidths(*system);
  return system;
}

// Every local rank must be a GPU of the system, and every pair connected.
Status check_ranks(const topo::TopoSystem& system, const nccom_topo_node_t& node,
                   const std::string& source, const topo::PathSettings& paths) {
  for (int i = 0; i < node.n_local; ++i) {
    if (system.gpuIndexOfRank(node.local_ranks[i]) < 0) {
      return make_error(NRT_INVALID, source + " has no <gpu> for local rank " +
                                         std::to_string(node.local_ranks[i]));
    }
  }
  for (int i = 0; i + 1 < node.n_local; ++i) {
    auto c = topo::checkP2p(system, node.local_ranks[i], node.local_ranks[i + 1], paths);
    if (!c) return make_error(c.error().status, source + ": " + c.error().message);
  }
  return {};
}

// Simple order (ncclTopoCompute's fallback when no path is found): one channel,
// the node's ranks ascending, NIC 0 both ways.
topo::TopoGraph simple_order(const nccom_topo_node_t& node) {
  topo::TopoGraph g = ring_template();
  g.nChannels = 1;
  g.nLocal = node.n_local;
  g.intra.assign(node.local_ranks, node.local_ranks + node.n_local);
  std::sort(g.intra.begin(), g.intra.end());
  g.inter = {{0, 0}};
  g.speedIntra = g.speedInter = 0.1F;
  g.typeIntra = g.typeInter = topo::PathType::SYS;
  return g;
}

// The nccom attributes of the RING <graph>: crossracktorack and up to four
// kangaRing lanes given as <gpu dev> lists, translated to ranks.
Status read_kanga(const topo::XmlDocument& doc, const topo::TopoSystem& system,
                  const std::string& source, topo::TopoGraph& g,
                  std::vector<std::vector<int>>& paths) {
  const topo::XmlNode* graph = nullptr;
  for (const topo::XmlNode* n : doc.root->childrenNamed("graph")) {
    auto id = n->getIntOr("id", -1);
    if (id && *id == g.id) graph = n;
  }
  if (graph == nullptr) return {};
  auto cross = graph->getIntOr("crossracktorack", 0);
  if (!cross) return cross.take_error();
  g.crossRackToRack = *cross != 0;
  auto lanes = graph->getIntOr("nkangaring", 0);
  if (!lanes) return lanes.take_error();
  if (*lanes < 0 || *lanes > topo::kMaxKangaPaths) {
    return make_error(NRT_INVALID, source + ": nkangaring " + std::to_string(*lanes) +
                                       " is outside 0..4 (paths.size() <= MAX_KANGA_PATHS)");
  }
  for (int k = 0; k < *lanes; ++k) {
    auto list = graph->getString("kangaring" + std::to_string(k));
    if (!list) return list.take_error();
    std::vector<int> ranks;
    size_t start = 0;
    while (start <= list->size()) {
      const size_t comma = list->find(',', start);
      const std::string item =
          list->substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      auto dev = topo::parseIntText(item);
      const int gpu = dev ? system.gpuIndexOfDev(static_cast<int>(*dev)) : -1;
      if (gpu < 0) {
        return make_error(NRT_INVALID, source + ": kangaring" + std::to_string(k) + " entry \"" +
                                           item + "\" is no <gpu dev> of the system");
      }
      ranks.push_back(system.of(topo::NodeType::GPU)[static_cast<size_t>(gpu)].gpu.rank);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (ranks.size() > static_cast<size_t>(topo::kKangaPathLen)) {
      return make_error(NRT_INVALID, source + ": kangaring" + std::to_string(k) + " has " +
                                         std::to_string(ranks.size()) + " entries; 64 at most");
    }
    paths.push_back(std::move(ranks));
  }
  return {};
}

Result<topo::TopoGraph> graph_from_text(const std::string& text, const std::string& source,
                                        const topo::TopoSystem& system,
                                        std::vector<std::vector<int>>& kanga) {
  auto doc = topo::parseXml(text, source);
  if (!doc) return doc.take_error();
  topo::TopoGraph g = ring_template();
  auto n = topo::graphFromXml(*doc, system, g);
  if (!n) return n.take_error();
  if (g.nChannels <= 0) {
    return make_error(NRT_INVALID, source + " holds no channel for graph id 0 (RING)");
  }
  if (Status s = read_kanga(*doc, system, source, g, kanga); !s) return s.take_error();
  return g;
}

}  // namespace

topo::TopoGraph ring_template() {
  topo::TopoGraph g;
  g.id = 0;
  g.pattern = topo::SearchPattern::Ring;
  g.crossNic = 2;
  g.collNet = 0;
  g.minChannels = 1;
  g.maxChannels = 16;
  return g;
}

Result<NodeTopology> build_node_topology(std::span<const TopoBackend> backends,
                                         const nccom_topo_machine_t& machine,
                                         const nccom_topo_node_t& node,
                                         const GraphSettings& settings) {
  auto chosen = choose_system_backend(backends, machine, settings);
  if (!chosen) return chosen.take_error();
  const TopoBackend& sys_backend = **chosen;

  NodeTopology out;
  out.backend = sys_backend.name();
  auto xml = sys_backend.system_xml(machine, node);
  if (!xml) return xml.take_error();
  out.system_xml = std::move(*xml);
  const std::string source = "the system XML of topology plugin " + out.backend;
  auto system = parse_system(out.system_xml, source, settings.paths, node);
  if (!system) return system.take_error();
  out.system = std::move(*system);
  if (Status s = check_ranks(out.system, node, source, settings.paths); !s) return s.take_error();

  if (settings.dump && !settings.topo_dump_file.empty()) {
    auto doc = topo::parseXml(out.system_xml, source);
    if (!doc) return doc.take_error();
    if (Status s = topo::writeXmlFile(*doc->root, settings.topo_dump_file); !s) {
      return make_error(
          s.error().status,
          "NCCL_TOPO_DUMP_FILE (topology.dump_file, written by rank 0): " + s.error().message);
    }
    NCCOM_INFO(log::kGraph, "topology XML written to %s (NCCL_TOPO_DUMP_FILE)",
               settings.topo_dump_file.c_str());
  }

  if (!settings.graph_file.empty()) {
    auto doc = topo::parseXmlFile(settings.graph_file);
    if (!doc) return doc.take_error();
    topo::TopoGraph g = ring_template();
    auto n = topo::graphFromXml(*doc, out.system, g);
    if (!n) return n.take_error();
    if (g.nChannels <= 0) {
      return make_error(NRT_INVALID, "NCCL_GRAPH_FILE " + settings.graph_file +
                                         " holds no channel for graph id 0 (RING)");
    }
    NCCOM_INFO(log::kGraph, "Search %d : %d channels loaded from XML graph", g.id, g.nChannels);
    out.graph = std::move(g);
    out.graph_origin = "NCCL_GRAPH_FILE " + settings.graph_file;
    return out;
  }

  nccom_topo_graph_request_t request{};
  request.struct_size = sizeof request;
  request.pattern = static_cast<int32_t>(topo::SearchPattern::Ring);
  request.cross_nic = 2;
  request.min_channels = 1;
  request.max_channels = 16;
  request.new_algorithm = settings.new_algorithm;
  // The describing backend searches first; the others may answer in turn.
  std::vector<const TopoBackend*> order{&sys_backend};
  for (const TopoBackend& b : backends) {
    if (&b != &sys_backend) order.push_back(&b);
  }
  for (const TopoBackend* b : order) {
    auto text = b->graph_xml(machine, node, out.system_xml, request);
    if (!text) return text.take_error();
    if (!text->has_value()) continue;
    auto g = graph_from_text(**text, "the graph XML of topology plugin " + b->name(), out.system,
                             out.kanga_paths);
    if (!g) return g.take_error();
    out.graph = std::move(*g);
    out.graph_origin = "the search of topology plugin " + b->name();
    return out;
  }
  NCCOM_INFO(log::kGraph, "Could not find a path for pattern %d, falling back to simple order",
             static_cast<int>(topo::SearchPattern::Ring));
  out.graph = simple_order(node);
  out.graph_origin = "the simple order (no plugin searched)";
  return out;
}

}  // namespace nccom::graphbuild
