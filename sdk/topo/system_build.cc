// <system> XML -> TopoSystem (upstream ncclTopoGetSystemFromXml and the
// ncclTopoAdd* family). Every rule broken is an error that names the element
// with source:line:col.
#include <nccom/topo/system.h>

#include <algorithm>
#include <utility>

namespace nccom::topo {
namespace {

constexpr int kTopoXmlVersion = 1;

// Upstream's kvDict lookups: first entry whose key is a prefix of the value.
template <class T, std::size_t N>
T lookupPrefix(const std::string& value, const std::pair<const char*, T> (&dict)[N], T fallback) {
  for (const auto& [key, v] : dict) {
    if (value.rfind(key, 0) == 0) return v;
  }
  return fallback;
}

constexpr std::pair<const char*, NodeType> kPciClass[] = {{"0x060400", NodeType::PCI},
                                                          {"0x068000", NodeType::NVS},
                                                          {"0x068001", NodeType::CPU},
                                                          {"0x03", NodeType::GPU},
                                                          {"0x02", NodeType::NIC}};
// Per-lane speed in units of 100 Mbps (so width GB/s = lanes * speed / 80).
// Both spellings: "8 GT/s" (older kernels) and sysfs's "8.0 GT/s PCIe".
constexpr std::pair<const char*, int> kPciGen[] = {
    {"2.5 GT/s", 15},   {"5 GT/s", 30},   {"5.0 GT/s", 30},   {"8 GT/s", 60},
    {"8.0 GT/s", 60},   {"16 GT/s", 120}, {"16.0 GT/s", 120}, {"32 GT/s", 240},
    {"32.0 GT/s", 240}, {"64 GT/s", 480}, {"64.0 GT/s", 480}};
constexpr int kPciGenDefault = 60;
constexpr std::pair<const char*, CpuArch> kCpuArch[] = {{"x86_64", CpuArch::X86},
                                                        {"arm64", CpuArch::Arm},
                                                        {"aarch64", CpuArch::Arm},
                                                        {"ppc64", CpuArch::Power}};
constexpr std::pair<const char*, CpuVendor> kCpuVendor[] = {{"GenuineIntel", CpuVendor::Intel},
                                                            {"AuthenticAMD", CpuVendor::Amd}};

class SystemBuilder {
 public:
  SystemBuilder(const XmlDocument& doc, const SystemOptions& options)
      : doc_(doc), options_(options) {}

  Result<TopoSystem> run();

 private:
  struct GpuElement {
    const XmlNode* xml;
    int gpu;  // index in the GPU bucket
    int cpu;  // index of the NUMA node above it
  };

  Error fail(const XmlNode& node, const std::string& rule) const {
    return make_error(NRT_INVALID, "topology " + node.describe(doc_.source) + ": " + rule);
  }
  // Prefixes an error of the XML getters (which name the element) with the source.
  Error wrap(Error e) const {
    e.message = "topology " + doc_.source + ": " + e.message;
    return e;
  }
  Result<int> intAttr(const XmlNode& node, std::string_view key, int64_t lo, int64_t hi) const;
  Result<int> intAttrOr(const XmlNode& node, std::string_view key, int fallback, int64_t lo,
                        int64_t hi) const;

  Status addCpu(const XmlNode& xml);
  Status addPci(const XmlNode& xml, NodeRef parent, int cpu);
  Status addGpu(const XmlNode& xml, NodeRef node, int cpu);
  Status addNic(const XmlNode& xml, NodeRef nic);
  Status addNet(const XmlNode& xml, NodeRef nic);
  Status addNvlinks(const GpuElement& g);

  const XmlDocument& doc_;
  const SystemOptions& options_;
  float nvlinkWidth_ = 0.0F;
  TopoSystem sys_;
  std::vector<GpuElement> gpus_;
};

Result<int> SystemBuilder::intAttr(const XmlNode& node, std::string_view key, int64_t lo,
                                   int64_t hi) const {
  auto v = node.getInt(key);
  if (!v) return wrap(v.take_error());
  if (*v < lo || *v > hi) {
    return fail(node, "attribute '" + std::string(key) + "'=" + std::to_string(*v) + " outside [" +
                          std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return static_cast<int>(*v);
}

Result<int> SystemBuilder::intAttrOr(const XmlNode& node, std::string_view key, int fallback,
                                     int64_t lo, int64_t hi) const {
  if (!node.hasAttribute(key)) return fallback;
  return intAttr(node, key, lo, hi);
}

Status SystemBuilder::addCpu(const XmlNode& xml) {
  auto numa = intAttr(xml, "numaid", 0, 1 << 20);
  if (!numa) return numa.take_error();
  if (sys_.find(NodeType::CPU, *numa) >= 0)
    return fail(xml, "duplicate cpu numaid " + std::to_string(*numa));
  auto ref = addNode(sys_, NodeType::CPU, *numa);
  if (!ref) return wrap(ref.take_error());
  CpuInfo info;
  if (const auto* arch = xml.attribute("arch"))
    info.arch = lookupPrefix(*arch, kCpuArch, CpuArch::Unknown);
  if (const auto* vendor = xml.attribute("vendor"))
    info.vendor = lookupPrefix(*vendor, kCpuVendor, CpuVendor::Unknown);
  if (info.arch == CpuArch::X86 && info.vendor == CpuVendor::Intel) {
    auto family = intAttrOr(xml, "familyid", 0, 0, 0xffff);
    if (!family) return family.take_error();
    auto model = intAttrOr(xml, "modelid", 0, 0, 0xffff);
    if (!model) return model.take_error();
    info.model = (*family == 6 && *model >= 0x55) ? CpuModel::Skylake : CpuModel::Broadwell;
  }
  if (const auto* aff = xml.attribute("affinity")) info.affinity = *aff;
  sys_.at(*ref).cpu = info;
  const int cpu = ref->index;
  for (const auto& child : xml.children()) {
    if (child->name() == "pci") {
      if (auto st = addPci(*child, *ref, cpu); !st) return st;
    } else if (child->name() == "nic") {
      // A NIC straight under the CPU: one shared NIC node (id 0), as upstream.
      int nic = sys_.find(NodeType::NIC, 0);
      if (nic < 0) {
        auto n = addNode(sys_, NodeType::NIC, 0);
        if (!n) return wrap(n.take_error());
        nic = n->index;
        if (auto st = connectNodes(sys_, *ref, *n, LinkType::PCI, kLocWidth); !st)
          return wrap(st.take_error());
        if (auto st = connectNodes(sys_, *n, *ref, LinkType::PCI, kLocWidth); !st)
          return wrap(st.take_error());
      }
      if (auto st = addNic(*child, {NodeType::NIC, nic}); !st) return st;
    }
  }
  return {};
}

Status SystemBuilder::addPci(const XmlNode& xml, NodeRef parent, int cpu) {
  auto busText = xml.getString("busid");
  if (!busText) return wrap(busText.take_error());
  auto busId = busIdToInt64(*busText);
  if (!busId)
    return fail(xml, "busid '" + *busText + "' is not a PCI bus id (hex digits, ':' and '.')");
  NodeType type = NodeType::PCI;
  if (const auto* cls = xml.attribute("class")) type = lookupPrefix(*cls, kPciClass, NodeType::PCI);
  const auto gpuXml = xml.childrenNamed("gpu");
  const auto nicXml = xml.childrenNamed("nic");
  if (gpuXml.size() > 1) {
    return fail(xml,
                "holds " + std::to_string(gpuXml.size()) +
                    " <gpu> elements; one NeuronCore per <pci> (give each core its own busid)");
  }
  if (!gpuXml.empty() && !nicXml.empty()) return fail(xml, "holds both a <gpu> and a <nic>");

  NodeRef node{};
  bool connect = false;
  if (!gpuXml.empty()) {
    if (sys_.find(NodeType::GPU, *busId) >= 0) return fail(xml, "duplicate gpu busid " + *busText);
    auto ref = addNode(sys_, NodeType::GPU, *busId);
    if (!ref) return wrap(ref.take_error());
    node = *ref;
    connect = true;
    if (auto st = addGpu(*gpuXml[0], node, cpu); !st) return st;
  } else if (!nicXml.empty()) {
    const int64_t nicId = *busId & ~int64_t{0xf};  // ports of one NIC merge into one node
    int nic = sys_.find(NodeType::NIC, nicId);
    if (nic < 0) {
      auto ref = addNode(sys_, NodeType::NIC, nicId);
      if (!ref) return wrap(ref.take_error());
      nic = ref->index;
      node = *ref;
      connect = true;
    }
    for (const XmlNode* n : nicXml) {
      if (auto st = addNic(*n, {NodeType::NIC, nic}); !st) return st;
    }
  } else if (type == NodeType::PCI) {
    if (sys_.find(NodeType::PCI, *busId) >= 0) return fail(xml, "duplicate pci busid " + *busText);
    auto ref = addNode(sys_, NodeType::PCI, *busId);
    if (!ref) return wrap(ref.take_error());
    node = *ref;
    connect = true;
    for (const XmlNode* sub : xml.childrenNamed("pci")) {
      if (auto st = addPci(*sub, node, cpu); !st) return st;
    }
  }
  // else: a device of another class with nothing we use under it (ignored, as upstream).
  if (!connect) return {};
  auto lanes = intAttrOr(xml, "link_width", 0, 0, 64);
  if (!lanes) return lanes.take_error();
  const int speed = xml.hasAttribute("link_speed")
                        ? lookupPrefix(*xml.attribute("link_speed"), kPciGen, kPciGenDefault)
                        : kPciGenDefault;
  const float width = static_cast<float>((*lanes == 0 ? 16 : *lanes) * speed) / 80.0F;
  if (auto st = connectNodes(sys_, node, parent, LinkType::PCI, width); !st)
    return wrap(st.take_error());
  if (auto st = connectNodes(sys_, parent, node, LinkType::PCI, width); !st)
    return wrap(st.take_error());
  return {};
}

Status SystemBuilder::addGpu(const XmlNode& xml, NodeRef node, int cpu) {
  if (!xml.hasAttribute("rank"))
    return fail(xml, "gpu without rank (every NeuronCore must name its rank)");
  auto rank = intAttr(xml, "rank", 0, (1 << 30));
  if (!rank) return rank.take_error();
  auto dev = intAttr(xml, "dev", 0, (1 << 30));
  if (!dev) return dev.take_error();
  auto sm = intAttrOr(xml, "sm", 0, 0, 1 << 20);
  if (!sm) return sm.take_error();
  auto gdr = intAttrOr(xml, "gdr", 0, 0, 1);
  if (!gdr) return gdr.take_error();
  if (sys_.gpuIndexOfRank(*rank) >= 0)
    return fail(xml, "duplicate gpu rank " + std::to_string(*rank));
  if (sys_.gpuIndexOfDev(*dev) >= 0) return fail(xml, "duplicate gpu dev " + std::to_string(*dev));
  GpuInfo& info = sys_.at(node).gpu;
  info = {*dev, *rank, *sm, *gdr};
  gpus_.push_back({&xml, node.index, cpu});
  return {};
}

Status SystemBuilder::addNic(const XmlNode& xml, NodeRef nic) {
  for (const XmlNode* net : xml.childrenNamed("net")) {
    if (auto st = addNet(*net, nic); !st) return st;
  }
  return {};
}

Status SystemBuilder::addNet(const XmlNode& xml, NodeRef nic) {
  auto dev = intAttr(xml, "dev", 0, (1 << 30));
  if (!dev) return dev.take_error();
  if (sys_.find(NodeType::NET, *dev) >= 0)
    return fail(xml, "duplicate net dev " + std::to_string(*dev));
  auto mbps = xml.getIntOr("speed", 10000);
  if (!mbps) return wrap(mbps.take_error());
  if (*mbps > 100'000'000)
    return fail(xml, "speed " + std::to_string(*mbps) + " Mbps is beyond any NIC");
  NetInfo info;
  info.dev = *dev;
  info.width = static_cast<float>(*mbps <= 0 ? 10000 : *mbps) / 8000.0F;  // some NICs report -1
  info.guid = static_cast<uint64_t>(*dev);
  if (xml.hasAttribute("guid")) {
    auto guid = xml.getHex("guid");
    if (!guid) return wrap(guid.take_error());
    info.guid = *guid;
  }
  auto port = intAttrOr(xml, "port", 0, 0, 1 << 20);
  auto gdr = intAttrOr(xml, "gdr", 0, 0, 1);
  auto maxConn = intAttrOr(xml, "maxconn", kMaxChannels, 1, 1 << 20);
  auto coll = intAttrOr(xml, "coll", 0, 0, 1);
  for (auto* r : {&port, &gdr, &maxConn, &coll}) {
    if (!*r) return r->take_error();
  }
  info.port = *port;
  info.gdr = *gdr;
  info.maxConn = *maxConn;
  info.coll = *coll;
  auto ref = addNode(sys_, NodeType::NET, *dev);
  if (!ref) return wrap(ref.take_error());
  sys_.at(*ref).net = info;
  if (auto st = connectNodes(sys_, nic, *ref, LinkType::NET, info.width); !st)
    return wrap(st.take_error());
  if (auto st = connectNodes(sys_, *ref, nic, LinkType::NET, info.width); !st)
    return wrap(st.take_error());
  return {};
}

Status SystemBuilder::addNvlinks(const GpuElement& g) {
  const NodeRef gpu{NodeType::GPU, g.gpu};
  for (const XmlNode* link : g.xml->childrenNamed("nvlink")) {
    auto target = link->getString("target");
    if (!target) return wrap(target.take_error());
    auto targetId = busIdToInt64(*target);
    if (!targetId) return fail(*link, "target '" + *target + "' is not a PCI bus id");
    auto count = intAttr(*link, "count", 1, kMaxNvlinkCount);
    if (!count) return count.take_error();
    auto tclass = link->getString("tclass");
    if (!tclass) return wrap(tclass.take_error());
    const NodeType targetType = lookupPrefix(*tclass, kPciClass, NodeType::PCI);
    NodeRef remote{};
    if (targetType == NodeType::GPU) {
      const int idx = sys_.find(NodeType::GPU, *targetId);
      if (idx < 0)
        return fail(*link, "nvlink to an unknown busid " + *target + " (no <gpu> with that busid)");
      if (idx == g.gpu) return fail(*link, "nvlink from a gpu to itself (" + *target + ")");
      remote = {NodeType::GPU, idx};
    } else if (targetType == NodeType::CPU) {
      remote = {NodeType::CPU, g.cpu};
    } else {
      int nvs = sys_.find(NodeType::NVS, 0);
      if (nvs < 0) {
        auto ref = addNode(sys_, NodeType::NVS, 0);
        if (!ref) return wrap(ref.take_error());
        nvs = ref->index;
      }
      remote = {NodeType::NVS, nvs};
    }
    const float perLink = nvlinkWidth_ > 0 ? nvlinkWidth_ : nvlinkWidthForSm(sys_.at(gpu).gpu.sm);
    const float width = static_cast<float>(*count) * perLink;
    if (auto st = connectNodes(sys_, gpu, remote, LinkType::NVL, width); !st)
      return wrap(st.take_error());
    // GPU peers add their own direction from their own <nvlink> elements.
    if (remote.type != NodeType::GPU) {
      if (auto st = connectNodes(sys_, remote, gpu, LinkType::NVL, width); !st)
        return wrap(st.take_error());
    }
  }
  return {};
}

Result<TopoSystem> SystemBuilder::run() {
  if (!doc_.root) return make_error(NRT_INVALID, "topology " + doc_.source + ": empty document");
  const XmlNode& root = *doc_.root;
  if (root.name() != "system")
    return fail(root, "root element is <" + root.name() + ">, expected <system>");
  auto version = root.getIntOr("version", kTopoXmlVersion);
  if (!version) return wrap(version.take_error());
  if (*version != kTopoXmlVersion) {
    return fail(root, "topology XML version " + std::to_string(*version) + ", " +
                          std::to_string(kTopoXmlVersion) + " supported");
  }
  // nccom extension: <system nvlinkwidth="GB/s"> gives the per-link width of
  // every <nvlink> when the `sm` values are not NVIDIA SM versions (the
  // Neuron platforms write their generation tag there). Options win.
  nvlinkWidth_ = options_.nvlinkWidth;
  if (nvlinkWidth_ <= 0 && root.hasAttribute("nvlinkwidth")) {
    auto w = root.getFloat("nvlinkwidth");
    if (!w) return wrap(w.take_error());
    if (!(*w > 0 && *w < 1e6)) return fail(root, "nvlinkwidth must be a positive width in GB/s");
    nvlinkWidth_ = static_cast<float>(*w);
  }
  for (const XmlNode* cpu : root.childrenNamed("cpu")) {
    if (auto st = addCpu(*cpu); !st) return st.take_error();
  }
  // NVLinks last: their targets may be declared anywhere in the document.
  for (const auto& g : gpus_) {
    if (auto st = addNvlinks(g); !st) return st.take_error();
  }
  for (const auto& g : gpus_) {
    for (const TopoLink& l : sys_.of(NodeType::GPU)[static_cast<std::size_t>(g.gpu)].links) {
      if (l.type != LinkType::NVL || l.remote.type != NodeType::GPU) continue;
      const auto& back = sys_.at(l.remote).links;
      const NodeRef me{NodeType::GPU, g.gpu};
      if (std::none_of(back.begin(), back.end(), [&](const TopoLink& b) {
            return b.remote == me && b.type == LinkType::NVL;
          })) {
        return fail(
            *g.xml,
            "nvlink to gpu " + int64ToBusId(sys_.at(l.remote).id) +
                " has no <nvlink> back from that gpu (links must be declared in both directions)");
      }
    }
  }
  if (auto st = connectCpus(sys_); !st) return wrap(st.take_error());
  sortSystem(sys_);
  return std::move(sys_);
}

}  // namespace

Result<TopoSystem> buildSystem(const XmlDocument& doc, const SystemOptions& options) {
  return SystemBuilder(doc, options).run();
}

}  // namespace nccom::topo
