// Graph editing primitives of the system graph and the small tables
// (names, widths, bus ids). The XML -> graph builder is system_build.cc.
#include <nccom/topo/system.h>
#include <nccom/topo/xml.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace nccom::topo {

const char* nodeTypeName(NodeType t) {
  static constexpr const char* kNames[] = {"GPU", "PCI", "NVS", "CPU", "NIC", "NET"};
  const int i = static_cast<int>(t);
  return i >= 0 && i < kNodeTypeCount ? kNames[i] : "?";
}

namespace {
constexpr const char* kPathNames[] = {"LOC", "NVL", "NVB", "PIX", "PXB", "PHB", "SYS"};
}

const char* pathTypeName(PathType t) {
  const int i = static_cast<int>(t);
  return i >= 0 && i <= static_cast<int>(PathType::SYS) ? kPathNames[i] : "?";
}

std::optional<PathType> pathTypeFromName(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(PathType::SYS); ++i) {
    if (name == kPathNames[i]) return static_cast<PathType>(i);
  }
  return std::nullopt;
}

int TopoSystem::find(NodeType t, int64_t id) const {
  const auto& set = of(t);
  for (std::size_t i = 0; i < set.size(); ++i) {
    if (set[i].id == id) return static_cast<int>(i);
  }
  return -1;
}

int TopoSystem::gpuIndexOfRank(int rank) const {
  const auto& gpus = of(NodeType::GPU);
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    if (gpus[i].gpu.rank == rank) return static_cast<int>(i);
  }
  return -1;
}

int TopoSystem::gpuIndexOfDev(int dev) const {
  const auto& gpus = of(NodeType::GPU);
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    if (gpus[i].gpu.dev == dev) return static_cast<int>(i);
  }
  return -1;
}

Result<NodeRef> addNode(TopoSystem& system, NodeType type, int64_t id) {
  auto& set = system.of(type);
  if (static_cast<int>(set.size()) >= kMaxNodesPerType) {
    return make_error(NRT_RESOURCE, std::string("topology: more than ") +
                                        std::to_string(kMaxNodesPerType) + " " +
                                        nodeTypeName(type) + " nodes (NCCL_TOPO_MAX_NODES)");
  }
  TopoNode node;
  node.type = type;
  node.id = id;
  set.push_back(std::move(node));
  return NodeRef{type, static_cast<int>(set.size()) - 1};
}

Status connectNodes(TopoSystem& system, NodeRef from, NodeRef to, LinkType type, float width) {
  auto& links = system.at(from).links;
  auto it = std::find_if(links.begin(), links.end(),
                         [&](const TopoLink& l) { return l.remote == to && l.type == type; });
  if (it == links.end()) {
    if (static_cast<int>(links.size()) >= kMaxLinksPerNode) {
      return make_error(NRT_RESOURCE, std::string("topology: ") + nodeTypeName(from.type) +
                                          " node " + std::to_string(system.at(from).id) +
                                          " has more than " + std::to_string(kMaxLinksPerNode) +
                                          " links");
    }
    links.push_back({type, width, to});
  } else {
    it->width += width;
  }
  // Widest first; stable so equal widths keep their insertion order.
  std::stable_sort(links.begin(), links.end(),
                   [](const TopoLink& a, const TopoLink& b) { return a.width > b.width; });
  return {};
}

void removeNode(TopoSystem& system, NodeRef node) {
  for (auto& set : system.nodes) {
    for (auto& n : set) {
      auto& links = n.links;
      links.erase(std::remove_if(links.begin(), links.end(),
                                 [&](const TopoLink& l) { return l.remote == node; }),
                  links.end());
      for (auto& l : links) {
        if (l.remote.type == node.type && l.remote.index > node.index) --l.remote.index;
      }
      for (auto& p : n.paths) p.clear();
    }
  }
  auto& set = system.of(node.type);
  set.erase(set.begin() + node.index);
}

float interCpuWidth(const CpuInfo& cpu) {
  if (cpu.arch == CpuArch::Power) return kP9Width;
  if (cpu.arch == CpuArch::Arm) return kArmWidth;
  if (cpu.arch == CpuArch::X86 && cpu.vendor == CpuVendor::Intel) {
    return cpu.model == CpuModel::Skylake ? kSklQpiWidth : kQpiWidth;
  }
  return kLocWidth;
}

float nvlinkWidthForSm(int sm) {
  if (sm >= 80) return kSm80NvlinkWidth;
  if (sm >= 70) return kSm70NvlinkWidth;
  return kSm60NvlinkWidth;
}

Status connectCpus(TopoSystem& system) {
  const int n = system.count(NodeType::CPU);
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      const float width = interCpuWidth(system.of(NodeType::CPU)[a].cpu);
      if (auto st =
              connectNodes(system, {NodeType::CPU, a}, {NodeType::CPU, b}, LinkType::SYS, width);
          !st)
        return st;
    }
  }
  return {};
}

namespace {

// Moves the link towards `up` last, then sorts the PCI children the same way.
// `seen` guards against PCI cycles in hand-built graphs.
void sortFrom(TopoSystem& system, NodeRef node, const NodeRef* up,
              std::vector<std::vector<bool>>& seen) {
  auto& mark = seen[static_cast<int>(node.type)];
  if (mark[static_cast<std::size_t>(node.index)]) return;
  mark[static_cast<std::size_t>(node.index)] = true;
  auto& links = system.at(node).links;
  if (up != nullptr) {
    auto it = std::find_if(links.begin(), links.end(),
                           [&](const TopoLink& l) { return l.remote == *up; });
    if (it != links.end()) std::rotate(it, it + 1, links.end());
  }
  const std::vector<TopoLink> snapshot = links;
  for (const auto& l : snapshot) {
    if (l.type == LinkType::PCI && (up == nullptr || !(l.remote == *up)))
      sortFrom(system, l.remote, &node, seen);
  }
}

}  // namespace

void sortSystem(TopoSystem& system) {
  std::vector<std::vector<bool>> seen(kNodeTypeCount);
  for (int t = 0; t < kNodeTypeCount; ++t) seen[t].assign(system.nodes[t].size(), false);
  for (int c = 0; c < system.count(NodeType::CPU); ++c)
    sortFrom(system, {NodeType::CPU, c}, nullptr, seen);
}

std::optional<int64_t> busIdToInt64(std::string_view busId) {
  std::string digits;
  for (char c : busId) {
    if (c == 'x' || c == 'X') return std::nullopt;  // hex digits only, no 0x prefix
    if (c != ':' && c != '.') digits += c;
  }
  if (digits.empty() || digits.size() > 15) return std::nullopt;  // keeps the id a positive int64
  const auto v = parseHexText(digits);
  if (!v) return std::nullopt;
  return static_cast<int64_t>(*v);
}

std::string int64ToBusId(int64_t id) {
  char buf[32];
  const auto u = static_cast<uint64_t>(id);
  std::snprintf(buf, sizeof buf, "%04" PRIx64 ":%02" PRIx64 ":%02" PRIx64 ".%01" PRIx64, u >> 20,
                (u & 0xff000) >> 12, (u & 0xff0) >> 4, u & 0xf);
  return buf;
}

}  // namespace nccom::topo
