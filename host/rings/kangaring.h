// kangaRing materialisation (Trn3-SwitchV1 only; the caller checks the
// platform). Assembly (our design — see docs/decisions/rings.md): kangaRing[k] is 16 lanes of
// 4 ranks; lane s comes from the node's s-th lowest rank, which put entries
// [4s, 4s+4) of its path k into its fragment's JbogKangaringPath[k] at Preset.
// The all-gather thus makes every rank of the node use the same paths, taken
// from their owners.
#pragma once

#include "rings/fragment.h"

#include <nccom/util/result.h>

#include <array>
#include <span>
#include <string>
#include <vector>

namespace nccom::rings {

using KangaRingPath = std::array<int, kKangaPathLen>;  // kangaRing[k][0..63], -1 padded

// fragments: every rank's, by rank. nodeRanks: this node's ranks ascending
// (rings::nodeRanks). nPaths: comm->nKangaRingChannels (0..4). localPaths:
// this rank's own paths from its search (empty: not compared).
// Errors (NRT_INVALID) name the path, lane and owner rank: more than 4 paths;
// a path that is empty, has a gap (-1 before a rank), names a rank off this
// node or a rank twice; an owner carrying a lane for a path k >= nPaths; an
// assembled path differing from this rank's own search.
Result<std::vector<KangaRingPath>> materialiseKangaRing(std::span<const TopoRanks> fragments,
                                                        std::span<const int> nodeRanks, int nPaths,
                                                        const KangaPaths& localPaths = {});

// "built %d kangaring paths", then "kangaring path[%d]=r0 r1 ..." per path.
std::vector<std::string> kangaRingLogLines(std::span<const KangaRingPath> paths);

}  // namespace nccom::rings
