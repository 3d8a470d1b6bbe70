// Graph XML <-> TopoGraph. See graph_xml.h.
#include <nccom/topo/graph_xml.h>
#include <nccom/util/log.h>

#include <cstdio>

namespace nccom::topo {
namespace {

class GraphReader {
 public:
  GraphReader(const XmlDocument& doc, const TopoSystem& system) : doc_(doc), system_(system) {}

  // Fills `out` from one <graph> element (already matched to the request).
  Status readGraph(const XmlNode& xml, TopoGraph& out) const;

  Error fail(const XmlNode& node, const std::string& rule) const {
    return make_error(NRT_INVALID, "graph XML " + node.describe(doc_.source) + ": " + rule);
  }
  Error wrap(Error e) const {
    e.message = "graph XML " + doc_.source + ": " + e.message;
    return e;
  }
  Result<int> intAttr(const XmlNode& node, std::string_view key, int64_t lo, int64_t hi) const {
    auto v = node.getInt(key);
    if (!v) return wrap(v.take_error());
    if (*v < lo || *v > hi) {
      return fail(node, "attribute '" + std::string(key) + "'=" + std::to_string(*v) +
                            " outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    return static_cast<int>(*v);
  }
  Result<PathType> typeAttr(const XmlNode& node, std::string_view key) const {
    auto v = node.getString(key);
    if (!v) return wrap(v.take_error());
    if (auto t = pathTypeFromName(*v)) return *t;
    return fail(node, "attribute '" + std::string(key) + "'='" + *v +
                          "' is not a path type (LOC NVL NVB PIX PXB PHB SYS)");
  }

 private:
  Status readChannel(const XmlNode& xml, int c, TopoGraph& out) const;

  const XmlDocument& doc_;
  const TopoSystem& system_;
};

Status GraphReader::readChannel(const XmlNode& xml, int c, TopoGraph& out) const {
  if (xml.name() != "channel") return fail(xml, "a <graph> holds only <channel> elements");
  int nNets = 0, nGpus = 0;
  for (const auto& sub : xml.children()) {
    auto dev = intAttr(*sub, "dev", 0, 1 << 30);
    if (!dev) return dev.take_error();
    if (sub->name() == "net") {
      if (nNets == 2)
        return fail(*sub, "channel " + std::to_string(c) + " lists more than 2 <net> entries");
      out.inter[static_cast<std::size_t>(c)][static_cast<std::size_t>(nNets++)] = *dev;
    } else if (sub->name() == "gpu") {
      const int g = system_.gpuIndexOfDev(*dev);
      if (g < 0)
        return fail(*sub, "XML Import Channel : dev " + std::to_string(*dev) + " not found.");
      if (nGpus == out.nLocal) {
        return fail(xml, "channel " + std::to_string(c) + " lists more than " +
                             std::to_string(out.nLocal) + " gpus (the system has " +
                             std::to_string(out.nLocal) + ")");
      }
      out.intra[static_cast<std::size_t>(c * out.nLocal + nGpus++)] =
          system_.of(NodeType::GPU)[static_cast<std::size_t>(g)].gpu.rank;
    } else {
      return fail(*sub, "a <channel> holds only <net> and <gpu> elements");
    }
  }
  if (nGpus != out.nLocal) {
    return fail(xml, "channel " + std::to_string(c) + " lists " + std::to_string(nGpus) +
                         " gpus, expected " + std::to_string(out.nLocal) + " (one per local rank)");
  }
  return {};
}

Status GraphReader::readGraph(const XmlNode& xml, TopoGraph& out) const {
  auto crossNic = intAttr(xml, "crossnic", 0, 2);
  auto pattern = intAttr(xml, "pattern", 1, 4);
  auto sameChannels = intAttr(xml, "samechannels", 0, 1);
  for (auto* r : {&crossNic, &pattern, &sameChannels}) {
    if (!*r) return r->take_error();
  }
  auto speedIntra = xml.getFloat("speedintra");
  if (!speedIntra) return wrap(speedIntra.take_error());
  auto speedInter = xml.getFloat("speedinter");
  if (!speedInter) return wrap(speedInter.take_error());
  auto typeIntra = typeAttr(xml, "typeintra");
  if (!typeIntra) return typeIntra.take_error();
  auto typeInter = typeAttr(xml, "typeinter");
  if (!typeInter) return typeInter.take_error();
  const int nChannels = static_cast<int>(xml.children().size());
  if (nChannels > kMaxChannels) {
    return fail(xml, "graph has " + std::to_string(nChannels) + " channels, at most " +
                         std::to_string(kMaxChannels));
  }
  if (xml.hasAttribute("nchannels")) {
    auto declared = intAttr(xml, "nchannels", 0, kMaxChannels);
    if (!declared) return declared.take_error();
    if (*declared != nChannels) {
      return fail(xml, "nchannels=" + std::to_string(*declared) + " but " +
                           std::to_string(nChannels) + " <channel> elements");
    }
  }
  out.crossNic = *crossNic;
  out.pattern = static_cast<SearchPattern>(*pattern);
  out.nChannels = nChannels;
  out.speedIntra = static_cast<float>(*speedIntra);
  out.speedInter = static_cast<float>(*speedInter);
  out.typeIntra = *typeIntra;
  out.typeInter = *typeInter;
  out.sameChannels = *sameChannels;
  out.nLocal = system_.count(NodeType::GPU);
  out.intra.assign(static_cast<std::size_t>(nChannels * out.nLocal), 0);
  out.inter.assign(static_cast<std::size_t>(nChannels), {0, 0});
  for (int c = 0; c < nChannels; ++c) {
    if (auto st = readChannel(*xml.children()[static_cast<std::size_t>(c)], c, out); !st) return st;
  }
  return {};
}

}  // namespace

Result<int> graphFromXml(const XmlDocument& doc, const TopoSystem& system, TopoGraph& graph) {
  GraphReader reader(doc, system);
  if (!doc.root) return make_error(NRT_INVALID, "graph XML " + doc.source + ": empty document");
  const XmlNode& root = *doc.root;
  if (root.name() != "graphs")
    return reader.fail(root, "root element is <" + root.name() + ">, expected <graphs>");
  auto version = root.getInt("version");
  if (!version) return reader.wrap(version.take_error());
  if (*version != kGraphXmlVersion) {
    char msg[96];
    std::snprintf(msg, sizeof msg, "XML Graph has wrong version %lld, %d needed",
                  static_cast<long long>(*version), kGraphXmlVersion);
    NCCOM_SDK_WARN("%s", msg);
    return reader.fail(root, msg);
  }
  TopoGraph result = graph;
  int loaded = 0;
  bool matched = false;
  for (const auto& sub : root.children()) {
    if (sub->name() != "graph") return reader.fail(*sub, "a <graphs> holds only <graph> elements");
    auto id = reader.intAttr(*sub, "id", 0, 1 << 30);
    if (!id) return id.take_error();
    if (*id != graph.id) continue;
    auto crossNic = reader.intAttr(*sub, "crossnic", 0, 2);
    if (!crossNic) return crossNic.take_error();
    if (graph.crossNic == 0 && *crossNic == 1) continue;
    if (auto st = reader.readGraph(*sub, result); !st) return st.take_error();
    loaded = result.nChannels;
    matched = true;
  }
  if (matched) graph = std::move(result);
  return loaded;
}

Status appendGraphXml(XmlNode& graphs, const TopoGraph& graph, const TopoSystem& system) {
  const std::string what = "graph XML writer (graph id " + std::to_string(graph.id) + "): ";
  if (graph.nChannels < 0 || graph.nChannels > kMaxChannels) {
    return make_error(NRT_INVALID, what + std::to_string(graph.nChannels) + " channels, at most " +
                                       std::to_string(kMaxChannels));
  }
  if (graph.intra.size() < static_cast<std::size_t>(graph.nChannels * graph.nLocal) ||
      graph.inter.size() < static_cast<std::size_t>(graph.nChannels)) {
    return make_error(NRT_INVALID, what + "intra/inter hold fewer entries than nChannels x nLocal");
  }
  if (graph.nLocal != system.count(NodeType::GPU)) {
    return make_error(NRT_INVALID, what + "nLocal is " + std::to_string(graph.nLocal) +
                                       " but the system has " +
                                       std::to_string(system.count(NodeType::GPU)) + " GPUs");
  }
  auto g = graphs.addChild("graph");
  if (!g) return g.take_error();
  XmlNode& x = **g;
  for (auto st :
       {x.setInt("id", graph.id), x.setInt("pattern", static_cast<int>(graph.pattern)),
        x.setInt("crossnic", graph.crossNic), x.setInt("nchannels", graph.nChannels),
        x.setFloat("speedintra", graph.speedIntra), x.setFloat("speedinter", graph.speedInter),
        x.setAttribute("typeintra", pathTypeName(graph.typeIntra)),
        x.setAttribute("typeinter", pathTypeName(graph.typeInter)),
        x.setInt("samechannels", graph.sameChannels)}) {
    if (!st) return st;
  }
  for (int c = 0; c < graph.nChannels; ++c) {
    if (auto st = appendChannelXml(x, graph, c, system); !st) return st;
  }
  return {};
}

Status appendChannelXml(XmlNode& graphXml, const TopoGraph& graph, int c,
                        const TopoSystem& system) {
  const std::string what = "graph XML writer (graph id " + std::to_string(graph.id) + "): ";
  if (c < 0 || c >= kMaxChannels || graph.inter.size() <= static_cast<std::size_t>(c) ||
      graph.intra.size() < static_cast<std::size_t>((c + 1) * graph.nLocal)) {
    return make_error(NRT_INVALID,
                      what + "channel " + std::to_string(c) + " is outside intra/inter");
  }
  auto ch = graphXml.addChild("channel");
  if (!ch) return ch.take_error();
  auto addDev = [&](const char* name, int dev) -> Status {
    auto e = (*ch)->addChild(name);
    if (!e) return e.take_error();
    return (*e)->setInt("dev", dev);
  };
  const bool nets = system.count(NodeType::NET) > 0;
  if (nets) {
    if (auto st = addDev("net", graph.inter[static_cast<std::size_t>(c)][0]); !st) return st;
  }
  for (int i = 0; i < graph.nLocal; ++i) {
    const int rank = graph.channel(c)[i];
    const int idx = system.gpuIndexOfRank(rank);
    if (idx < 0) {
      return make_error(NRT_INVALID, what + "channel " + std::to_string(c) + " names rank " +
                                         std::to_string(rank) + ", which is no GPU of this system");
    }
    if (auto st = addDev("gpu", system.of(NodeType::GPU)[static_cast<std::size_t>(idx)].gpu.dev);
        !st)
      return st;
  }
  if (nets) {
    if (auto st = addDev("net", graph.inter[static_cast<std::size_t>(c)][1]); !st) return st;
  }
  return {};
}

Result<XmlDocument> graphsToXml(const std::vector<const TopoGraph*>& graphs,
                                const TopoSystem& system) {
  XmlDocument doc;
  doc.source = "<graph writer>";
  doc.root = std::make_unique<XmlNode>("graphs");
  if (auto st = doc.root->setInt("version", kGraphXmlVersion); !st) return st.take_error();
  for (const TopoGraph* g : graphs) {
    if (auto st = appendGraphXml(*doc.root, *g, system); !st) return st.take_error();
  }
  return doc;
}

}  // namespace nccom::topo
