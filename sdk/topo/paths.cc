// Path computation (upstream ncclTopoSetPaths / ComputePaths / CheckP2p /
// CheckGdr / TrimSystem / SearchInit). See paths.h.
#include <nccom/topo/paths.h>
#include <nccom/util/log.h>

#include <algorithm>
#include <cstdlib>

namespace nccom::topo {
namespace {

int asInt(PathType t) { return static_cast<int>(t); }

void resetPaths(TopoSystem& system) {
  for (auto& set : system.nodes) {
    for (auto& node : set) {
      for (int t = 0; t < kNodeTypeCount; ++t)
        node.paths[t].assign(system.nodes[t].size(), TopoPath{});
    }
  }
}

bool hasLinkTo(const TopoNode& node, NodeRef to) {
  return std::any_of(node.links.begin(), node.links.end(),
                     [&](const TopoLink& l) { return l.remote == to; });
}

// BFS from `base`: every node's path towards base, level by level. A GPU
// may only be crossed as the middle of a single NVLink-NVLink hop pair.
Status setPaths(TopoSystem& system, NodeRef base) {
  const int bt = static_cast<int>(base.type);
  const auto bi = static_cast<std::size_t>(base.index);
  TopoPath& self = system.at(base).paths[bt][bi];
  self = TopoPath{{}, kLocWidth, PathType::LOC};
  std::vector<NodeRef> frontier{base};
  while (!frontier.empty()) {
    std::vector<NodeRef> next;
    for (const NodeRef nodeRef : frontier) {
      const TopoNode& node = system.at(nodeRef);
      const TopoPath path = node.paths[bt][bi];
      for (const TopoLink& link : node.links) {
        TopoNode& rem = system.at(link.remote);
        if (!(nodeRef == base) && node.type == NodeType::GPU &&
            (link.type != LinkType::NVL || rem.type != NodeType::GPU || path.count() > 1)) {
          continue;
        }
        TopoPath& remPath = rem.paths[bt][bi];
        const float width = std::min(path.width, link.width);
        if (!((remPath.width == 0.0F || remPath.count() > path.count()) && remPath.width < width))
          continue;
        if (!hasLinkTo(rem, nodeRef)) {
          return make_error(NRT_INVALID, std::string("topology: link from ") +
                                             nodeTypeName(node.type) + " " +
                                             std::to_string(node.id) + " to " +
                                             nodeTypeName(rem.type) + " " + std::to_string(rem.id) +
                                             " has no reverse link (paths need both directions)");
        }
        remPath.hops.clear();
        remPath.hops.push_back(nodeRef);
        remPath.hops.insert(remPath.hops.end(), path.hops.begin(), path.hops.end());
        remPath.width = width;
        int type = link.type == LinkType::NET ? asInt(PathType::LOC) : static_cast<int>(link.type);
        if (node.type == NodeType::PCI && rem.type == NodeType::PCI) type = asInt(PathType::PXB);
        if (link.type == LinkType::PCI &&
            (node.type == NodeType::CPU || rem.type == NodeType::CPU)) {
          type = asInt(PathType::PHB);
        }
        if (node.type == NodeType::GPU && path.type == PathType::NVL &&
            type == asInt(PathType::NVL) && remPath.count() > 1) {
          type = asInt(PathType::NVB);
        }
        remPath.type = static_cast<PathType>(std::max(asInt(path.type), type));
        if (std::find(next.begin(), next.end(), link.remote) == next.end())
          next.push_back(link.remote);
      }
    }
    frontier = std::move(next);
  }
  return {};
}

// Reroutes src -> (t2, i2) through NUMA node c (upstream addCpuStep).
void addCpuStep(TopoSystem& system, int c, NodeRef src, NodeRef dst) {
  const NodeRef cpuRef{NodeType::CPU, c};
  const TopoPath toCpu =
      system.at(src).paths[static_cast<int>(NodeType::CPU)][static_cast<std::size_t>(c)];
  const TopoPath fromCpu =
      system.at(cpuRef).paths[static_cast<int>(dst.type)][static_cast<std::size_t>(dst.index)];
  TopoPath& path =
      system.at(src).paths[static_cast<int>(dst.type)][static_cast<std::size_t>(dst.index)];
  if (!toCpu.reachable() || !fromCpu.reachable()) {
    path = TopoPath{};
    return;
  }
  path.hops = toCpu.hops;
  path.hops.insert(path.hops.end(), fromCpu.hops.begin(), fromCpu.hops.end());
  path.type = static_cast<PathType>(std::max(asInt(toCpu.type), asInt(fromCpu.type)));
  path.width = std::min(toCpu.width, fromCpu.width);
}

// The P2P ceiling without a user override (upstream 2.8/2.9 rule, read from
// the first NUMA node): not through ARM root complexes, not through Intel
// ones before Skylake, never across Intel sockets; anything else goes.
int defaultP2pLevel(const TopoSystem& system) {
  if (system.count(NodeType::CPU) == 0) return asInt(PathType::SYS);
  const CpuInfo& cpu = system.of(NodeType::CPU)[0].cpu;
  if (cpu.arch == CpuArch::Arm) return asInt(PathType::PXB);
  if (cpu.arch == CpuArch::X86 && cpu.vendor == CpuVendor::Intel) {
    return asInt(cpu.model == CpuModel::Broadwell ? PathType::PXB : PathType::PHB);
  }
  return asInt(PathType::SYS);
}

bool p2pAllowed(const TopoSystem& system, int from, int to, const PathSettings& settings) {
  const TopoPath& path = system.of(NodeType::GPU)[static_cast<std::size_t>(from)]
                             .paths[0][static_cast<std::size_t>(to)];
  if (!path.reachable()) return false;
  const int level =
      settings.p2pLevel != PathSettings::kUnset ? settings.p2pLevel : defaultP2pLevel(system);
  return asInt(path.type) <= level;
}

}  // namespace

Result<int> resolveLevel(std::optional<std::string_view> disableValue,
                         std::optional<std::string_view> levelValue, std::string_view disableName,
                         std::string_view levelName) {
  if (disableValue) {
    const auto v = parseIntText(*disableValue);
    if (!v) {
      return make_error(NRT_INVALID, std::string(disableName) + "='" + std::string(*disableValue) +
                                         "' is not an integer (1 disables, 0 does not)");
    }
    if (*v == 1) return asInt(PathType::LOC);
  }
  if (!levelValue) return PathSettings::kUnset;
  if (auto t = pathTypeFromName(*levelValue)) return asInt(*t);
  const std::string_view s = *levelValue;
  if (!s.empty() && s[0] >= '0' && s[0] <= '9') {
    if (auto v = parseIntText(s); v && *v >= 0) {
      static constexpr PathType kOldLevels[] = {PathType::LOC, PathType::PIX, PathType::PXB,
                                                PathType::PHB, PathType::SYS};
      return asInt(kOldLevels[std::min<int64_t>(*v, 4)]);
    }
  }
  return make_error(NRT_INVALID,
                    std::string(levelName) + "='" + std::string(s) +
                        "' is not a level (LOC, NVL, NVB, PIX, PXB, PHB, SYS or 0..4)");
}

Result<int> resolveP2pLevel(std::optional<std::string_view> p2pDisable,
                            std::optional<std::string_view> p2pLevel) {
  return resolveLevel(p2pDisable, p2pLevel, "NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL");
}

int localCpuOfGpu(const TopoSystem& system, int gpuIndex) {
  const auto& paths = system.of(NodeType::GPU)[static_cast<std::size_t>(gpuIndex)]
                          .paths[static_cast<int>(NodeType::CPU)];
  int best = -1;
  for (std::size_t c = 0; c < paths.size(); ++c) {
    if (!paths[c].reachable()) continue;
    if (best < 0 || paths[c].count() < paths[static_cast<std::size_t>(best)].count())
      best = static_cast<int>(c);
  }
  return best;
}

bool checkGdr(const TopoSystem& system, int gpuIndex, int netIndex, const PathSettings& settings) {
  const TopoNode& gpu = system.of(NodeType::GPU)[static_cast<std::size_t>(gpuIndex)];
  const TopoNode& net = system.of(NodeType::NET)[static_cast<std::size_t>(netIndex)];
  if (gpu.gpu.gdr == 0 || net.net.gdr == 0) return false;
  const TopoPath& path =
      gpu.paths[static_cast<int>(NodeType::NET)][static_cast<std::size_t>(netIndex)];
  const int level =
      settings.gdrLevel != PathSettings::kUnset ? settings.gdrLevel : asInt(PathType::PXB);
  return path.reachable() && asInt(path.type) <= level;
}

Status computePaths(TopoSystem& system, const PathSettings& settings) {
  resetPaths(system);
  for (int t = 0; t < kNodeTypeCount; ++t) {
    for (int i = 0; i < system.count(static_cast<NodeType>(t)); ++i) {
      if (auto st = setPaths(system, {static_cast<NodeType>(t), i}); !st) return st;
    }
  }
  const int nGpus = system.count(NodeType::GPU);
  for (int g = 0; g < nGpus; ++g) {
    for (int p = 0; p < nGpus; ++p) {
      if (p2pAllowed(system, p, g, settings)) continue;
      const int cpu = localCpuOfGpu(system, g);  // divert all traffic through the CPU
      if (cpu >= 0) addCpuStep(system, cpu, {NodeType::GPU, p}, {NodeType::GPU, g});
    }
  }
  for (int n = 0; n < system.count(NodeType::NET); ++n) {
    for (int g = 0; g < nGpus; ++g) {
      if (checkGdr(system, g, n, settings)) continue;
      const int cpu = localCpuOfGpu(system, g);
      if (cpu < 0) continue;
      addCpuStep(system, cpu, {NodeType::NET, n}, {NodeType::GPU, g});
      addCpuStep(system, cpu, {NodeType::GPU, g}, {NodeType::NET, n});
    }
  }
  return {};
}

Result<P2pCheck> checkP2p(const TopoSystem& system, int rankA, int rankB,
                          const PathSettings& settings) {
  const int a = system.gpuIndexOfRank(rankA);
  const int b = system.gpuIndexOfRank(rankB);
  for (const auto& [rank, idx] : {std::pair{rankA, a}, std::pair{rankB, b}}) {
    if (idx < 0)
      return make_error(
          NRT_INVALID, "checkP2p: rank " + std::to_string(rank) + " is not a GPU of this topology");
  }
  const TopoNode& gpuA = system.of(NodeType::GPU)[static_cast<std::size_t>(a)];
  const TopoNode& gpuB = system.of(NodeType::GPU)[static_cast<std::size_t>(b)];
  if (gpuA.paths[0].size() != system.of(NodeType::GPU).size()) {
    return make_error(NRT_INVALID, "checkP2p: paths are not computed (call computePaths first)");
  }
  const TopoPath& path = gpuA.paths[0][static_cast<std::size_t>(b)];
  if (!path.reachable()) {
    return make_error(NRT_INVALID, "no path between rank " + std::to_string(rankA) + " and rank " +
                                       std::to_string(rankB));
  }
  P2pCheck out;
  out.pathType = path.type;
  const int level =
      settings.p2pLevel != PathSettings::kUnset ? settings.p2pLevel : defaultP2pLevel(system);
  out.p2p = asInt(path.type) <= level;
  out.read = path.type == PathType::NVL && gpuA.gpu.sm == 80 && gpuB.gpu.sm == 80;
  if (path.count() == 2 && path.hops[0].type == NodeType::GPU)
    out.intermediateRank = system.at(path.hops[0]).gpu.rank;
  return out;
}

Result<P2pCheck> checkP2p(const TopoSystem& system, int rankA, int rankB,
                          std::optional<std::string_view> p2pLevel,
                          std::optional<std::string_view> p2pDisable) {
  auto level = resolveP2pLevel(p2pDisable, p2pLevel);
  if (!level) return level.take_error();
  PathSettings settings;
  settings.p2pLevel = *level;
  return checkP2p(system, rankA, rankB, settings);
}

Status trimSystem(TopoSystem& system, int myRank, int nRanks) {
  const int me = system.gpuIndexOfRank(myRank);
  if (me < 0)
    return make_error(NRT_INVALID, "trimSystem: rank " + std::to_string(myRank) +
                                       " is not a GPU of this topology");
  auto& gpus = system.of(NodeType::GPU);
  if (gpus[static_cast<std::size_t>(me)].paths[0].size() != gpus.size()) {
    return make_error(NRT_INVALID, "trimSystem: paths are not computed (call computePaths first)");
  }
  // Reachability is symmetric and transitive, so "reachable from my GPU" is
  // upstream's domain of my rank.
  const auto& mine = gpus[static_cast<std::size_t>(me)].paths[static_cast<int>(NodeType::GPU)];
  std::vector<int64_t> drop;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    if (!mine[i].reachable()) drop.push_back(gpus[i].id);
  }
  for (int64_t id : drop) {
    NCCOM_SDK_INFO(NCCOM_SUBSYS_GRAPH, "Topology trim: dropping GPU %s, not connected to rank %d",
                   int64ToBusId(id).c_str(), myRank);
    removeNode(system, {NodeType::GPU, system.find(NodeType::GPU, id)});
  }
  if (system.count(NodeType::GPU) == nRanks) {
    while (system.count(NodeType::NET) > 0) removeNode(system, {NodeType::NET, 0});
  }
  resetPaths(system);
  return {};
}

void computeSearchWidths(TopoSystem& system) {
  system.maxWidth = 0.0F;
  system.totalWidth = 0.0F;
  const bool inter = system.count(NodeType::NET) > 0;
  if (!inter && system.count(NodeType::GPU) == 1) {
    system.maxWidth = kLocWidth;
    return;
  }
  const int target = static_cast<int>(inter ? NodeType::NET : NodeType::GPU);
  for (const auto& gpu : system.of(NodeType::GPU)) {
    for (const auto& path : gpu.paths[target]) {
      if (path.count() > 0) system.maxWidth = std::max(system.maxWidth, path.width);
    }
    float nvl = 0.0F, pci = 0.0F;
    for (const auto& link : gpu.links) {
      if (link.type == LinkType::NVL) nvl += link.width;
      if (link.type == LinkType::PCI) pci = link.width;
    }
    system.totalWidth = std::max(system.totalWidth, std::max(nvl, pci));
  }
}

}  // namespace nccom::topo
