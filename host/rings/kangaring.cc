// kangaRing assembly from the gathered JbogKangaringPath lanes.
#include "rings/kangaring.h"

#include <algorithm>
#include <unordered_set>

namespace nccom::rings {
namespace {

Error invalid(std::string msg) { return make_error(NRT_INVALID, "kangaring: " + std::move(msg)); }

Status checkNodeRanks(std::span<const int> nodeRanks, std::size_t nRanks) {
  if (nodeRanks.empty()) return invalid("this node has no ranks");
  for (std::size_t i = 0; i < nodeRanks.size(); ++i) {
    const int r = nodeRanks[i];
    if (r < 0 || static_cast<std::size_t>(r) >= nRanks || (i > 0 && r <= nodeRanks[i - 1]))
      return invalid("node ranks must be distinct ranks in [0, " + std::to_string(nRanks) +
                     ") in ascending order; entry " + std::to_string(i) + " is " +
                     std::to_string(r));
  }
  return {};
}

// Shape of one assembled path: a non-empty run of distinct node ranks, then -1s.
Status checkPath(const KangaRingPath& p, int k, std::span<const int> nodeRanks) {
  if (p[0] == -1) return invalid("path " + std::to_string(k) + " is empty (lane 0 starts with -1)");
  std::unordered_set<int> seen;
  bool ended = false;
  for (int i = 0; i < kKangaPathLen; ++i) {
    const int x = p[i];
    const std::string at = "path " + std::to_string(k) + " entry " + std::to_string(i) + " (lane " +
                           std::to_string(i / kKangaLane) + ")";
    if (x == -1) {
      ended = true;
      continue;
    }
    if (ended)
      return invalid(at + " = " + std::to_string(x) +
                     " follows a -1: paths are padded only at the end");
    if (!std::binary_search(nodeRanks.begin(), nodeRanks.end(), x))
      return invalid(at + " = " + std::to_string(x) + " is not a rank of this node");
    if (!seen.insert(x).second) return invalid(at + " = " + std::to_string(x) + " repeats a rank");
  }
  return {};
}

}  // namespace

Result<std::vector<KangaRingPath>> materialiseKangaRing(std::span<const TopoRanks> fragments,
                                                        std::span<const int> nodeRanks, int nPaths,
                                                        const KangaPaths& localPaths) {
  if (nPaths < 0 || nPaths > kMaxKangaPaths)
    return invalid("nKangaRingChannels " + std::to_string(nPaths) +
                   " outside [0, 4] (MAX_KANGA_PATHS)");
  if (Status s = checkNodeRanks(nodeRanks, fragments.size()); !s) return s.take_error();
  if (!localPaths.empty() && localPaths.size() != static_cast<std::size_t>(nPaths))
    return invalid("this rank's search has " + std::to_string(localPaths.size()) +
                   " paths, nKangaRingChannels is " + std::to_string(nPaths));
  const int owners = std::min<int>(kKangaSlots, static_cast<int>(nodeRanks.size()));

  // An owner carrying a lane for a path this rank does not have means the
  // node's ranks disagree on the path count.
  for (int s = 0; s < owners; ++s) {
    const TopoRanks& f = fragments[nodeRanks[s]];
    for (int k = nPaths; k < kMaxKangaPaths; ++k) {
      if (std::any_of(f.kangaPath[k].begin(), f.kangaPath[k].end(), [](int x) { return x != -1; }))
        return invalid("rank " + std::to_string(nodeRanks[s]) + " carries a lane of path " +
                       std::to_string(k) + " but this rank has " + std::to_string(nPaths) +
                       " paths");
    }
  }

  std::vector<KangaRingPath> paths(nPaths);
  for (int k = 0; k < nPaths; ++k) {
    KangaRingPath& p = paths[k];
    p.fill(-1);
    for (int s = 0; s < owners; ++s)
      std::copy_n(fragments[nodeRanks[s]].kangaPath[k].begin(), kKangaLane,
                  p.begin() + s * kKangaLane);
    if (Status st = checkPath(p, k, nodeRanks); !st) return st.take_error();
    if (localPaths.empty()) continue;
    const auto& mine = localPaths[k];
    for (int i = 0; i < kKangaPathLen; ++i) {
      const int want = i < static_cast<int>(mine.size()) ? mine[i] : -1;
      if (p[i] != want)
        return invalid("path " + std::to_string(k) + " entry " + std::to_string(i) + " is " +
                       std::to_string(p[i]) + " from lane owner rank " +
                       std::to_string(i / kKangaLane < owners ? nodeRanks[i / kKangaLane] : -1) +
                       ", this rank's search says " + std::to_string(want));
    }
  }
  return paths;
}

std::vector<std::string> kangaRingLogLines(std::span<const KangaRingPath> paths) {
  std::vector<std::string> lines{"built " + std::to_string(paths.size()) + " kangaring paths"};
  for (std::size_t k = 0; k < paths.size(); ++k) {
    std::string body;
    for (int x : paths[k]) {
      if (x == -1) break;
      if (!body.empty()) body += ' ';
      body += std::to_string(x);
    }
    lines.push_back("kangaring path[" + std::to_string(k) + "]=" + body);
  }
  return lines;
}

}  // namespace nccom::rings
