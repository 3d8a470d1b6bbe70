// MLA cycles: the MLA blocks of each ring (see mla_cycles.h and docs/decisions/rings.md).
#include "rings/mla_cycles.h"

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>

namespace nccom::rings {
namespace {

Error invalid(std::string msg) { return make_error(NRT_INVALID, "mla cycles: " + std::move(msg)); }

int64_t mlaKey(int node, int mla) { return (int64_t{node} << 32) | static_cast<uint32_t>(mla); }

// Whole-ring blocks of channel c: violations for every MLA met in two blocks.
void findViolations(int c, const std::vector<int>& ring, std::span<const int> rankMla,
                    std::span<const int> rankNode, std::vector<MlaViolation>& out) {
  const int n = static_cast<int>(ring.size());
  auto key = [&](int pos) {
    const int x = ring[pos % n];
    return mlaKey(rankNode[x], rankMla[x]);
  };
  int start = 0;  // a block boundary, so no block is split by the walk's wrap
  while (start < n && key(start) == key(start + n - 1)) ++start;
  if (start == n) return;  // the whole ring is one MLA
  std::unordered_map<int64_t, int> firstRankOf;
  std::unordered_set<int64_t> reported;
  for (int i = 0; i < n; ++i) {
    const int pos = start + i;
    if (i > 0 && key(pos) == key(pos - 1)) continue;  // inside a block
    const int x = ring[pos % n];
    const auto [it, fresh] = firstRankOf.emplace(key(pos), x);
    if (!fresh && reported.insert(key(pos)).second)
      out.push_back(MlaViolation{c, rankNode[x], rankMla[x], it->second, x});
  }
}

// This node's MLAs in ring order from myRank, each block once, cyclically.
std::vector<int> nodeCycle(const std::vector<int>& ring, int myNode, std::span<const int> rankMla,
                           std::span<const int> rankNode) {
  std::vector<int> cycle;
  for (int x : ring) {
    if (rankNode[x] != myNode) continue;
    if (cycle.empty() || cycle.back() != rankMla[x]) cycle.push_back(rankMla[x]);
  }
  if (cycle.size() > 1 && cycle.back() == cycle.front()) cycle.pop_back();  // the wrap joins them
  return cycle;
}

}  // namespace

std::string MlaViolation::message() const {
  return "ring " + std::to_string(channel) + " enters MLA " + std::to_string(mla) + " of node " +
         std::to_string(node) + " twice (block at rank " + std::to_string(firstRank) +
         ", again at rank " + std::to_string(againRank) +
         "): an MLA must be one contiguous block of the ring";
}

Result<MlaCycles> buildMlaCycles(const Rings& rings, int myRank, std::span<const int> rankMla,
                                 std::span<const int> rankNode) {
  const std::size_t nRanks = rankMla.size();
  if (nRanks == 0 || rankNode.size() != nRanks)
    return invalid(std::to_string(rankMla.size()) + " mla_idx and " +
                   std::to_string(rankNode.size()) + " node entries: need one of each per rank");
  if (myRank < 0 || static_cast<std::size_t>(myRank) >= nRanks)
    return invalid("myRank " + std::to_string(myRank) + " outside [0, " + std::to_string(nRanks) +
                   ")");
  for (std::size_t r = 0; r < nRanks; ++r) {
    if (rankMla[r] < 0)
      return invalid("rank " + std::to_string(r) + " has mla_idx " + std::to_string(rankMla[r]));
    if (rankNode[r] < 0)
      return invalid("rank " + std::to_string(r) + " has node " + std::to_string(rankNode[r]));
  }
  if (rings.channels.size() != static_cast<std::size_t>(rings.nChannels))
    return invalid("rings hold " + std::to_string(rings.channels.size()) +
                   " channels, nChannels is " + std::to_string(rings.nChannels));
  for (int c = 0; c < rings.nChannels; ++c) {
    const auto& u = rings.channels[c].userRanks;
    if (u.size() != nRanks || u.front() != myRank || std::any_of(u.begin(), u.end(), [&](int x) {
          return x < 0 || static_cast<std::size_t>(x) >= nRanks;
        }))
      return invalid("channel " + std::to_string(c) + "'s userRanks are not a ring of " +
                     std::to_string(nRanks) + " ranks starting at rank " + std::to_string(myRank));
  }

  MlaCycles out;
  const int myNode = rankNode[myRank];
  std::unordered_set<int> mlas;
  for (std::size_t r = 0; r < nRanks; ++r)
    if (rankNode[r] == myNode) mlas.insert(rankMla[r]);
  out.nMlaInCycle = static_cast<int>(mlas.size());
  for (int c = 0; c < rings.nChannels; ++c) {
    const auto& u = rings.channels[c].userRanks;
    findViolations(c, u, rankMla, rankNode, out.violations);
    out.cycles.push_back(nodeCycle(u, myNode, rankMla, rankNode));
  }
  return out;
}

Status checkMlaContiguity(const MlaCycles& cycles) {
  if (cycles.violations.empty()) return {};
  return invalid(cycles.violations.front().message() + " (" +
                 std::to_string(cycles.violations.size()) + " violation(s) in all)");
}

std::string mlaCyclesLogLine(const MlaCycles& cycles) {
  return "built " + std::to_string(cycles.cycles.size()) + " mla cycles";
}

}  // namespace nccom::rings
