// ncclTopoComputeP2pChannels and ncclTopoGetNetDev.
#include "rings/channels.h"

#include <algorithm>
#include <climits>
#include <string>

namespace nccom::rings {
namespace {
Error invalid(std::string msg) { return make_error(NRT_INVALID, std::move(msg)); }
}  // namespace

int nextPow2(int v) {
  int p = 1;
  while (p < v && p < (1 << 30)) p <<= 1;
  return p;
}

int reverseBits(int i, int bits) {
  int out = 0;
  for (int b = 0; b < bits; ++b) {
    if (i & (1 << b)) out |= 1 << (bits - 1 - b);
  }
  return out;
}

double nvlWidthDivisor(int compCap) {
  if (compCap == 86) return 12.0;
  if (compCap >= 60 && compCap <= 69) return 18.0;
  return 21.0;
}

Result<P2pChannels> computeP2pChannels(int nChannels, std::span<const float> nvlPathWidths,
                                       int compCap) {
  if (nChannels < 0 || nChannels > kMaxP2pChannels)
    return invalid("p2p channels: ring channel count " + std::to_string(nChannels) +
                   " outside [0, 32] (Postset caps it at 32)");
  const int base = std::max(nChannels, kMinP2pChannels);
  int minCh = INT_MAX;
  const double div = nvlWidthDivisor(compCap);
  for (std::size_t p = 0; p < nvlPathWidths.size(); ++p) {
    const float w = nvlPathWidths[p];
    if (!(w >= 0.0F) || w > 1.0e6F)  // also rejects NaN
      return invalid("p2p channels: NVL path width [" + std::to_string(p) +
                     "] = " + std::to_string(w) + " is not a bandwidth in [0, 1e6]");
    minCh = std::min(minCh, 2 * std::max(1, static_cast<int>(w / div)));
  }
  minCh = std::min(minCh, base);

  P2pChannels out;
  out.p2pnChannelsPerPeer = nextPow2(minCh);
  out.p2pnChannels = nextPow2(base);
  int bits = 0;
  while ((1 << bits) < out.p2pnChannels) ++bits;
  out.p2pChannels.resize(out.p2pnChannels);
  for (int i = 0; i < out.p2pnChannels; ++i) out.p2pChannels[i] = reverseBits(i, bits);
  out.initFrom = nChannels;
  out.initTo = std::max(nChannels, out.p2pnChannels);
  return out;
}

Result<int> netDevForChannel(const topo::TopoGraph* graph, int rank, int channelId,
                             const LocalNetFn& localNet) {
  if (graph == nullptr) {
    if (!localNet)
      return invalid("net device: no graph and no local-net fallback for rank " +
                     std::to_string(rank));
    return localNet(rank);
  }
  const topo::TopoGraph& g = *graph;
  if (g.nChannels < 1 || g.nLocal < 1)
    return invalid("net device: graph has " + std::to_string(g.nChannels) + " channels of " +
                   std::to_string(g.nLocal) + " local ranks");
  if (channelId < 0)
    return invalid("net device: channel id " + std::to_string(channelId) + " is negative");
  const int c = channelId % g.nChannels;
  if (g.intra.size() < static_cast<std::size_t>(c + 1) * g.nLocal ||
      g.inter.size() <= static_cast<std::size_t>(c))
    return invalid("net device: graph channel " + std::to_string(c) +
                   " has no intra row or NIC pair");
  const int dir = (g.channel(c)[0] != rank) ? 1 : 0;  // the node's head uses the entry-side NIC
  return g.inter[c][dir];
}

}  // namespace nccom::rings
