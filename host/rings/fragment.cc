// ncclTopoPreset and the fragment's wire form (the original's ncclTopoRanks).
#include "rings/fragment.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace nccom::rings {
namespace {

constexpr std::size_t kRecvOff = 0, kSendOff = 128, kPrevOff = 256, kNextOff = 384;
constexpr std::size_t kTreeOff = 512, kTreeEnd = 896, kKangaOff = 896;

Error invalid(std::string msg) { return make_error(NRT_INVALID, std::move(msg)); }

void putI32(uint8_t* p, int v) {
  const auto u = static_cast<uint32_t>(v);
  p[0] = static_cast<uint8_t>(u);
  p[1] = static_cast<uint8_t>(u >> 8);
  p[2] = static_cast<uint8_t>(u >> 16);
  p[3] = static_cast<uint8_t>(u >> 24);
}

int getI32(const uint8_t* p) {
  const uint32_t u =
      uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
  return static_cast<int>(u);
}

// Checks that channel c's row is a set of distinct non-negative ranks equal
// to channel 0's set (`sorted0`), so every channel orders the same node.
Status checkRow(const topo::TopoGraph& g, int c, const std::vector<int>& sorted0) {
  std::vector<int> row(g.channel(c), g.channel(c) + g.nLocal);
  std::sort(row.begin(), row.end());
  if (row.front() < 0)
    return invalid("graph channel " + std::to_string(c) + " holds rank " +
                   std::to_string(row.front()) + ": ranks must be >= 0");
  if (std::adjacent_find(row.begin(), row.end()) != row.end())
    return invalid("graph channel " + std::to_string(c) + " lists rank " +
                   std::to_string(*std::adjacent_find(row.begin(), row.end())) +
                   " twice: a channel's row must be a permutation of the node's ranks");
  if (c > 0 && row != sorted0)
    return invalid(
        "graph channel " + std::to_string(c) +
        " orders other ranks than channel 0: every row must permute the same node ranks");
  return {};
}

Status checkGraph(const topo::TopoGraph& g) {
  if (g.nChannels < 1 || g.nChannels > kMaxChannels)
    return invalid("graph nChannels " + std::to_string(g.nChannels) + " outside [1, 32]");
  if (g.nLocal < 1 || g.nLocal > topo::kMaxLocalRanks)
    return invalid("graph nLocal " + std::to_string(g.nLocal) + " outside [1, 256]");
  if (g.intra.size() < static_cast<std::size_t>(g.nChannels) * g.nLocal)
    return invalid("graph intra holds " + std::to_string(g.intra.size()) +
                   " entries, needs nChannels*nLocal = " + std::to_string(g.nChannels * g.nLocal));
  const std::vector<int> sorted0 = nodeRanks(g);
  for (int c = 0; c < g.nChannels; ++c) {
    if (Status s = checkRow(g, c, sorted0); !s) return s;
  }
  return {};
}

}  // namespace

TopoRanks::TopoRanks() {
  ringRecv.fill(-1);
  ringSend.fill(-1);
  ringPrev.fill(-1);
  ringNext.fill(-1);
  for (auto& lane : kangaPath) lane.fill(-1);
}

int TopoRanks::activeChannels() const {
  int n = 0;
  while (n < kMaxChannels && ringRecv[n] >= 0) ++n;
  return n;
}

std::vector<int> nodeRanks(const topo::TopoGraph& graph) {
  if (graph.nLocal < 1 || graph.intra.size() < static_cast<std::size_t>(graph.nLocal)) return {};
  std::vector<int> ranks(graph.channel(0), graph.channel(0) + graph.nLocal);
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

int localSlot(const topo::TopoGraph& graph, int rank) {
  const std::vector<int> ranks = nodeRanks(graph);
  const auto it = std::lower_bound(ranks.begin(), ranks.end(), rank);
  return (it != ranks.end() && *it == rank) ? static_cast<int>(it - ranks.begin()) : -1;
}

Result<TopoRanks> preset(const topo::TopoGraph& graph, int myRank, const KangaPaths& kangaRing) {
  if (Status s = checkGraph(graph); !s) return s.take_error();
  if (kangaRing.size() > static_cast<std::size_t>(kMaxKangaPaths))
    return invalid("preset: " + std::to_string(kangaRing.size()) +
                   " kangaRing paths, MAX_KANGA_PATHS is 4");
  TopoRanks out;
  const int last = graph.nLocal - 1;
  for (int c = 0; c < graph.nChannels; ++c) {
    const int* intra = graph.channel(c);
    const int i = static_cast<int>(std::find(intra, intra + graph.nLocal, myRank) - intra);
    if (i == graph.nLocal)
      return invalid("preset: rank " + std::to_string(myRank) + " is not in graph channel " +
                     std::to_string(c) + ": the graph belongs to another node");
    out.ringRecv[c] = intra[0];
    out.ringSend[c] = intra[last];
    out.ringPrev[c] = (i == 0) ? -1 : intra[i - 1];
    out.ringNext[c] = (i == last) ? -1 : intra[i + 1];
  }
  const int slot = localSlot(graph, myRank);
  for (std::size_t k = 0; k < kangaRing.size(); ++k) {
    const auto& path = kangaRing[k];
    if (path.size() > static_cast<std::size_t>(kKangaPathLen))
      return invalid("preset: kangaRing path " + std::to_string(k) + " has " +
                     std::to_string(path.size()) + " entries, at most 64");
    if (slot >= kKangaSlots) continue;  // only the node's 16 lowest ranks carry a lane
    for (int j = 0; j < kKangaLane; ++j) {
      const std::size_t at = static_cast<std::size_t>(slot * kKangaLane + j);
      out.kangaPath[k][j] = at < path.size() ? path[at] : -1;
    }
  }
  return out;
}

std::array<uint8_t, kFragmentBytes> encodeFragment(const TopoRanks& r) {
  std::array<uint8_t, kFragmentBytes> b{};  // tree region stays zero
  for (int c = 0; c < kMaxChannels; ++c) {
    putI32(&b[kRecvOff + 4 * c], r.ringRecv[c]);
    putI32(&b[kSendOff + 4 * c], r.ringSend[c]);
    putI32(&b[kPrevOff + 4 * c], r.ringPrev[c]);
    putI32(&b[kNextOff + 4 * c], r.ringNext[c]);
  }
  for (int k = 0; k < kMaxKangaPaths; ++k)
    for (int j = 0; j < kKangaLane; ++j)
      putI32(&b[kKangaOff + 4 * (k * kKangaLane + j)], r.kangaPath[k][j]);
  return b;
}

namespace {

std::string where(int source, const char* field, int index) {
  return "ring fragment from rank " + std::to_string(source) + ": " + field + "[" +
         std::to_string(index) + "]";
}

Status checkRange(int v, int lo, int nRanks, int source, const char* field, int index) {
  if (v >= lo && v < nRanks) return {};
  return invalid(where(source, field, index) + " = " + std::to_string(v) + " outside [" +
                 std::to_string(lo) + ", " + std::to_string(nRanks) + ")");
}

// One active channel: ranges, and the head/tail rules of Preset.
Status checkChannel(const TopoRanks& r, int c, int source, int nRanks) {
  if (Status s = checkRange(r.ringRecv[c], 0, nRanks, source, "ringRecv", c); !s) return s;
  if (Status s = checkRange(r.ringSend[c], 0, nRanks, source, "ringSend", c); !s) return s;
  if (Status s = checkRange(r.ringPrev[c], -1, nRanks, source, "ringPrev", c); !s) return s;
  if (Status s = checkRange(r.ringNext[c], -1, nRanks, source, "ringNext", c); !s) return s;
  const bool head = r.ringRecv[c] == source, tail = r.ringSend[c] == source;
  if (head != (r.ringPrev[c] == -1))
    return invalid(where(source, "ringPrev", c) + " = " + std::to_string(r.ringPrev[c]) +
                   (head ? ": the node's ring head has no local predecessor (must be -1)"
                         : ": only the node's ring head (ringRecv) may have no local predecessor"));
  if (tail != (r.ringNext[c] == -1))
    return invalid(where(source, "ringNext", c) + " = " + std::to_string(r.ringNext[c]) +
                   (tail ? ": the node's ring tail has no local successor (must be -1)"
                         : ": only the node's ring tail (ringSend) may have no local successor"));
  if (r.ringPrev[c] == source || r.ringNext[c] == source)
    return invalid(where(source, r.ringPrev[c] == source ? "ringPrev" : "ringNext", c) +
                   " names the source rank itself");
  return {};
}

}  // namespace

Result<TopoRanks> decodeFragment(std::span<const uint8_t> bytes, int sourceRank, int nRanks) {
  if (bytes.size() != kFragmentBytes)
    return invalid("ring fragment from rank " + std::to_string(sourceRank) + ": " +
                   std::to_string(bytes.size()) + " bytes, expected 960");
  if (nRanks < 1 || sourceRank < 0 || sourceRank >= nRanks)
    return invalid("ring fragment: source rank " + std::to_string(sourceRank) + " outside [0, " +
                   std::to_string(nRanks) + ")");
  for (std::size_t off = kTreeOff; off < kTreeEnd; ++off) {
    if (bytes[off] != 0)
      return invalid("ring fragment from rank " + std::to_string(sourceRank) + ": tree byte " +
                     std::to_string(off) + " is " + std::to_string(bytes[off]) +
                     ", the tree fields must be zero");
  }
  TopoRanks r;
  for (int c = 0; c < kMaxChannels; ++c) {
    r.ringRecv[c] = getI32(&bytes[kRecvOff + 4 * c]);
    r.ringSend[c] = getI32(&bytes[kSendOff + 4 * c]);
    r.ringPrev[c] = getI32(&bytes[kPrevOff + 4 * c]);
    r.ringNext[c] = getI32(&bytes[kNextOff + 4 * c]);
  }
  for (int k = 0; k < kMaxKangaPaths; ++k)
    for (int j = 0; j < kKangaLane; ++j)
      r.kangaPath[k][j] = getI32(&bytes[kKangaOff + 4 * (k * kKangaLane + j)]);

  const int n = r.activeChannels();
  if (n == 0)
    return invalid(where(sourceRank, "ringRecv", 0) + " = " + std::to_string(r.ringRecv[0]) +
                   ": a fragment carries at least one channel");
  for (int c = 0; c < n; ++c) {
    if (Status s = checkChannel(r, c, sourceRank, nRanks); !s) return s.take_error();
  }
  for (int c = n; c < kMaxChannels; ++c) {
    const std::array<std::pair<const char*, int>, 4> unused{{{"ringRecv", r.ringRecv[c]},
                                                             {"ringSend", r.ringSend[c]},
                                                             {"ringPrev", r.ringPrev[c]},
                                                             {"ringNext", r.ringNext[c]}}};
    for (const auto& [field, v] : unused) {
      if (v != -1)
        return invalid(where(sourceRank, field, c) + " = " + std::to_string(v) +
                       ": the fragment has " + std::to_string(n) +
                       " channels, later slots must be -1");
    }
  }
  for (int k = 0; k < kMaxKangaPaths; ++k)
    for (int j = 0; j < kKangaLane; ++j) {
      if (Status s = checkRange(r.kangaPath[k][j], -1, nRanks, sourceRank, "JbogKangaringPath",
                                k * kKangaLane + j);
          !s)
        return s.take_error();
    }
  return r;
}

}  // namespace nccom::rings
