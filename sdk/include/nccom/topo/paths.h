// All-pairs paths over the system graph (upstream paths.cc): a BFS from
// every node fills node.paths[type][index] with the hop list, bottleneck
// width and path type; P2P and GPU Direct RDMA rules then divert some paths
// through a CPU. Also the P2P reachability check, trimming, and the
// search's width summary. No getenv: callers pass the NCCL_P2P_LEVEL /
// NCCL_P2P_DISABLE / NCCL_NET_GDR_LEVEL values.
#pragma once

#include <nccom/topo/system.h>

#include <optional>
#include <string_view>

namespace nccom::topo {

// The resolved ceilings. kUnset means "no user override": P2P then follows
// the CPU-architecture rule, GDR uses PXB.
struct PathSettings {
  static constexpr int kUnset = -2;
  int p2pLevel = kUnset;  // a PathType value, or kUnset
  int gdrLevel = kUnset;  // a PathType value, or kUnset
};

// Resolves NCCL_P2P_DISABLE / NCCL_P2P_LEVEL text (nullopt = variable not
// set) as upstream ncclGetLevel: DISABLE=1 gives LOC; a level is a path-type
// name (LOC..SYS) or an old-style number 0..4 (capped at 4) mapped to
// LOC, PIX, PXB, PHB, SYS. Unlike upstream, an unparseable value is an
// error naming the variable and the accepted values.
Result<int> resolveLevel(std::optional<std::string_view> disableValue,
                         std::optional<std::string_view> levelValue, std::string_view disableName,
                         std::string_view levelName);
Result<int> resolveP2pLevel(std::optional<std::string_view> p2pDisable,
                            std::optional<std::string_view> p2pLevel);

// Runs the BFS from every node, then applies the P2P and GDR diversions.
// Errors when a diversion needs a CPU the GPU cannot reach.
Status computePaths(TopoSystem& system, const PathSettings& settings = {});

struct P2pCheck {
  bool p2p = false;
  bool read = false;
  int intermediateRank = -1;  // the GPU in the middle of a 2-hop GPU-GPU path
  PathType pathType = PathType::SYS;
};

// Can ranks a and b use P2P (upstream ncclTopoCheckP2p)? Paths must be
// computed. Errors: a rank that is no GPU of this system, and "no path
// between rank X and rank Y" when the graph leaves them unconnected.
Result<P2pCheck> checkP2p(const TopoSystem& system, int rankA, int rankB,
                          const PathSettings& settings);
// Same, with the environment values passed as text.
Result<P2pCheck> checkP2p(const TopoSystem& system, int rankA, int rankB,
                          std::optional<std::string_view> p2pLevel,
                          std::optional<std::string_view> p2pDisable);

// May GPU g talk to NET n by GPU Direct RDMA (upstream ncclTopoCheckGdr,
// write direction)? Both must support it and the path be within gdrLevel.
bool checkGdr(const TopoSystem& system, int gpuIndex, int netIndex, const PathSettings& settings);

// Drops every GPU outside the connected domain of myRank's GPU, and every
// NET node when all nRanks are local (upstream ncclTopoTrimSystem). Needs
// computed paths; clears them (recompute afterwards).
Status trimSystem(TopoSystem& system, int myRank, int nRanks);

// system.maxWidth / totalWidth as the search seeds them (ncclTopoSearchInit).
void computeSearchWidths(TopoSystem& system);

// The NUMA node closest (fewest hops) to a GPU, or -1 when none is reachable.
int localCpuOfGpu(const TopoSystem& system, int gpuIndex);

}  // namespace nccom::topo
