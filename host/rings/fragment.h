// The per-rank ring fragment (the original's ncclTopoRanks, filled by
// ncclTopoPreset): what each rank knows about its own node's ring segments
// before the all-gather, and its fixed 960-byte wire form. The fragment travels
// over the network between our own ranks, so the decoder trusts nothing: every
// field is range- and shape-checked.
#pragma once

#include <nccom/topo/graph.h>
#include <nccom/util/result.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace nccom::rings {

inline constexpr int kMaxChannels = topo::kMaxChannels;         // 32
inline constexpr int kMaxKangaPaths = topo::kMaxKangaPaths;     // 4
inline constexpr int kKangaPathLen = topo::kKangaPathLen;       // 64
inline constexpr int kKangaLane = 4;                            // ints per rank and path
inline constexpr int kKangaSlots = kKangaPathLen / kKangaLane;  // 16 contributing ranks
inline constexpr std::size_t kFragmentBytes = 960;

// ncclTopoRanks. Unused channel slots and unused kangaRing lanes hold -1.
struct TopoRanks {
  std::array<int, kMaxChannels> ringRecv{};  // node's ring head (receives from the network)
  std::array<int, kMaxChannels> ringSend{};  // node's ring tail (sends to the network)
  std::array<int, kMaxChannels> ringPrev{};  // this rank's local predecessor, -1 at the head
  std::array<int, kMaxChannels> ringNext{};  // this rank's local successor, -1 at the tail
  std::array<std::array<int, kKangaLane>, kMaxKangaPaths> kangaPath{};  // JbogKangaringPath

  TopoRanks();  // every slot -1

  // Number of leading channels with a ring head (a decoded fragment's active
  // channels always form such a prefix).
  int activeChannels() const;
};

// One rank's kangaRing paths as its topology search produced them
// (comm->kangaRing before Preset): at most 4 paths of at most 64 ranks.
using KangaPaths = std::vector<std::vector<int>>;

// ncclTopoPreset: this rank's fragment for `graph` (channels [0, nChannels)).
// kangaRing lane: if this rank is the s-th lowest rank of its node (s < 16),
// it contributes entries [4s, 4s+4) of each path (see docs/decisions/rings.md, "kangaRing
// assembly"). Errors name the channel and rule when the graph is malformed
// (rank missing from or repeated in a channel's row, rows that are not
// permutations of the same ranks, too many channels or paths).
Result<TopoRanks> preset(const topo::TopoGraph& graph, int myRank,
                         const KangaPaths& kangaRing = {});

// Position of `rank` among its node's ranks in ascending order (the node's
// ranks are read from the graph's channel 0 row); -1 if absent.
int localSlot(const topo::TopoGraph& graph, int rank);

// The node's ranks in ascending order (the graph's channel 0 row, sorted).
std::vector<int> nodeRanks(const topo::TopoGraph& graph);

// ---- Wire form (little-endian int32, ncclTopoRanks' layout) -----------------
// [0,128) ringRecv  [128,256) ringSend  [256,384) ringPrev  [384,512) ringNext
// [512,896) treeToParent/treeToChild0/treeToChild1: never written, all zero
// [896,960) JbogKangaringPath[4][4]
std::array<uint8_t, kFragmentBytes> encodeFragment(const TopoRanks& ranks);

// Checks, naming the source rank, field and index on failure (NRT_INVALID):
// length is exactly 960; the tree region is zero; channels with a head form
// a prefix of at least 1 channel; on them recv/send are ranks in [0, nRanks)
// and prev/next in [-1, nRanks); prev is -1 exactly when the source rank is
// the head, next is -1 exactly when it is the tail; slots past the prefix
// are all -1; kangaRing entries are in [-1, nRanks).
Result<TopoRanks> decodeFragment(std::span<const uint8_t> bytes, int sourceRank, int nRanks);

}  // namespace nccom::rings
