// The search result every topology backend produces and the ring layer
// consumes: per channel, this node's rank order and the NIC pair it uses. A
// clean C++ form of the original's ncclTopoGraph; only the behaviourally
// relevant limits are kept (32 channels, 256 local ranks).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace nccom::topo {

inline constexpr int kMaxChannels = 32;     // MAXCHANNELS, ncclMaxNchannels()
inline constexpr int kMaxLocalRanks = 256;  // NCCL_TOPO_MAX_NODES
inline constexpr int kMaxKangaPaths = 4;    // MAX_KANGA_PATHS
inline constexpr int kKangaPathLen = 64;    // kangaRing[4][64]

// Path types, upstream numbering.
enum class PathType : int { LOC = 0, NVL = 1, NVB = 2, PIX = 3, PXB = 4, PHB = 5, SYS = 6 };

// Topology search patterns (upstream numbering); only RING is ever built.
enum class SearchPattern : int { BalancedTree = 1, SplitTree = 2, Tree = 3, Ring = 4 };

struct TopoGraph {
  // Template fields (buildGraphTransportsRank's RING template).
  int id = 0;
  SearchPattern pattern = SearchPattern::Ring;
  int crossNic = 2;  // 2 = auto, resolved by the search
  int collNet = 0;
  int minChannels = 1;
  int maxChannels = 16;

  // Search result.
  int nChannels = 0;
  float speedIntra = 0.0F;
  float speedInter = 0.0F;
  PathType typeIntra = PathType::LOC;
  PathType typeInter = PathType::PIX;
  int sameChannels = 1;
  int nHops = 0;

  // Row stride of `intra`: the number of local ranks (NeuronCores) on a node.
  int nLocal = 0;
  // intra[c * nLocal + i]: channel c's i-th local rank, in ring order.
  std::vector<int> intra;
  // inter[c] = {entry-side NIC, exit-side NIC} of channel c.
  std::vector<std::array<int, 2>> inter;
  // Trn3-SwitchV1: the cross-rack vs intra-rack lane decision of the search.
  bool crossRackToRack = false;

  [[nodiscard]] const int* channel(int c) const {
    return intra.data() + static_cast<size_t>(c) * nLocal;
  }
};

}  // namespace nccom::topo
