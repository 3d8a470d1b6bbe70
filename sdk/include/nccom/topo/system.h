// The typed system graph (upstream ncclTopoSystem): nodes
// bucketed by type, typed links with widths in GB/s, and per node the paths
// to every other node (filled by paths.h). Built from a <system> XML by
// buildSystem(); nodes and links are addressed by (type, index), never by
// pointer, so the whole graph is a plain copyable value.
#pragma once

#include <nccom/topo/graph.h>
#include <nccom/topo/xml.h>
#include <nccom/util/result.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nccom::topo {

// Node type indices, upstream numbering (GPU = NeuronCore, CPU = NUMA node).
enum class NodeType : int { GPU = 0, PCI = 1, NVS = 2, CPU = 3, NIC = 4, NET = 5 };
inline constexpr int kNodeTypeCount = 6;
// Link types, upstream numbering: a link's type is also the path type it
// contributes (PCI = PIX, SYS = SYS); NET links count as LOC.
enum class LinkType : int { LOC = 0, NVL = 1, PCI = 3, SYS = 6, NET = 7 };

const char* nodeTypeName(NodeType t);
const char* pathTypeName(PathType t);  // "LOC", "NVL", "NVB", "PIX", "PXB", "PHB", "SYS"
// Inverse of pathTypeName (exact, upper case); nullopt for anything else.
std::optional<PathType> pathTypeFromName(std::string_view name);

// Widths in GB/s (upstream values).
inline constexpr float kLocWidth = 5000.0F;
inline constexpr float kSm60NvlinkWidth = 18.0F;
inline constexpr float kSm70NvlinkWidth = 21.0F;
inline constexpr float kSm80NvlinkWidth = 20.0F;
inline constexpr float kQpiWidth = 6.0F;
inline constexpr float kSklQpiWidth = 9.0F;
inline constexpr float kP9Width = 32.0F;
inline constexpr float kArmWidth = 6.0F;

// Capacity (NCCL_TOPO_MAX_NODES per type, NCCL_TOPO_MAX_LINKS per node).
inline constexpr int kMaxNodesPerType = 256;
inline constexpr int kMaxLinksPerNode = 256;
inline constexpr int kMaxNvlinkCount = 64;  // our sanity bound on <nvlink count>

enum class CpuArch : int { Unknown = 0, X86 = 1, Power = 2, Arm = 3 };
enum class CpuVendor : int { Unknown = 0, Intel = 1, Amd = 2 };
enum class CpuModel : int { Unknown = 0, Broadwell = 1, Skylake = 2 };

struct NodeRef {
  NodeType type = NodeType::GPU;
  int index = -1;
  bool operator==(const NodeRef&) const = default;
};

struct TopoLink {
  LinkType type = LinkType::LOC;
  float width = 0.0F;
  NodeRef remote;
};

// A path from its owner node to one target node. hops[k] is the node reached
// by the k-th link; hops.back() is the target. The path to oneself has no
// hops, width kLocWidth and type LOC; an unreachable target has width 0.
struct TopoPath {
  std::vector<NodeRef> hops;
  float width = 0.0F;
  PathType type = PathType::SYS;
  int count() const { return static_cast<int>(hops.size()); }
  bool reachable() const { return width > 0.0F; }
};

struct GpuInfo {
  int dev = -1;
  int rank = -1;
  int sm = 0;  // the `sm` attribute: a Trainium generation tag here
  int gdr = 0;
};

struct NetInfo {
  int dev = -1;
  uint64_t guid = 0;
  int port = 0;
  float width = 0.0F;  // speed Mbps / 8000
  int gdr = 0;
  int coll = 0;
  int maxConn = kMaxChannels;
};

struct CpuInfo {
  CpuArch arch = CpuArch::Unknown;
  CpuVendor vendor = CpuVendor::Unknown;
  CpuModel model = CpuModel::Unknown;
  std::string affinity;  // kept as text; this layer never pins threads
};

struct TopoNode {
  NodeType type = NodeType::PCI;
  int64_t id = 0;  // busid as int64 (GPU/PCI/NIC), numaid (CPU), dev (NET), 0 (NVS)
  GpuInfo gpu;
  NetInfo net;
  CpuInfo cpu;
  std::vector<TopoLink> links;  // canonical order after sortSystem()
  // paths[t][i]: from this node to nodes[t][i] (computePaths()).
  std::array<std::vector<TopoPath>, kNodeTypeCount> paths;
};

struct TopoSystem {
  std::array<std::vector<TopoNode>, kNodeTypeCount> nodes;
  float maxWidth = 0.0F;    // computeSearchWidths()
  float totalWidth = 0.0F;  // computeSearchWidths()

  std::vector<TopoNode>& of(NodeType t) { return nodes[static_cast<int>(t)]; }
  const std::vector<TopoNode>& of(NodeType t) const { return nodes[static_cast<int>(t)]; }
  TopoNode& at(NodeRef r) { return of(r.type)[static_cast<std::size_t>(r.index)]; }
  const TopoNode& at(NodeRef r) const { return of(r.type)[static_cast<std::size_t>(r.index)]; }
  int count(NodeType t) const { return static_cast<int>(of(t).size()); }
  // Index of the node of type t with this id, or -1.
  int find(NodeType t, int64_t id) const;
  // Index of the GPU node of this rank / dev, or -1.
  int gpuIndexOfRank(int rank) const;
  int gpuIndexOfDev(int dev) const;
};

// Graph editing (upstream ncclTopoCreateNode / ConnectNodes / RemoveNode /
// SortSystem). Used by buildSystem() and by tests that hand-build graphs.
Result<NodeRef> addNode(TopoSystem& system, NodeType type, int64_t id);
// One directed link; a second link of the same type to the same node adds
// its width. Links stay ordered by width, widest first.
Status connectNodes(TopoSystem& system, NodeRef from, NodeRef to, LinkType type, float width);
// Removes a node, every link to it and every path (paths must be recomputed).
void removeNode(TopoSystem& system, NodeRef node);
// Fully connects the CPU nodes with SYS links (upstream ncclTopoConnectCpus).
Status connectCpus(TopoSystem& system);
// Canonical link order: NVLinks, PCI down, PCI up, SYS (ncclTopoSortSystem).
void sortSystem(TopoSystem& system);
// Inter-CPU (SYS) width of a NUMA node by its arch/vendor/model.
float interCpuWidth(const CpuInfo& cpu);
// Per-link NVLink width for a GPU `sm` value (upstream ncclTopoNVLinkSpeed).
float nvlinkWidthForSm(int sm);

struct SystemOptions {
  // > 0: per-link width of every <nvlink>, overriding <system nvlinkwidth>
  // (an nccom extension the Neuron synthesizer writes) and nvlinkWidthForSm().
  float nvlinkWidth = 0.0F;
};

// Builds the graph from a parsed <system> document: CPUs, PCI trees, GPUs,
// NICs/NETs, then NVLinks, CPU interconnect, canonical sort. Paths are not
// computed. Errors name the element (source:line:col) and rule.
Result<TopoSystem> buildSystem(const XmlDocument& doc, const SystemOptions& options = {});

// "0000:10:1c.0" -> 0x00001001c0 (hex digits, ':' and '.' skipped), as
// upstream busIdToInt64; nullopt on any other character or > 16 digits.
std::optional<int64_t> busIdToInt64(std::string_view busId);
std::string int64ToBusId(int64_t id);

}  // namespace nccom::topo
