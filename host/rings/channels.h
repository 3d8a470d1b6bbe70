// P2P channel counts and the per-channel NIC (ncclTopoComputeP2pChannels,
// ncclTopoGetNetDev).
#pragma once

#include <nccom/topo/graph.h>
#include <nccom/util/result.h>

#include <functional>
#include <span>
#include <vector>

namespace nccom::rings {

inline constexpr int kMinP2pChannels = 1;   // ncclParamMinP2pNChannels
inline constexpr int kMaxP2pChannels = 32;  // ncclParamMaxP2pNChannels

struct P2pChannels {
  int p2pnChannels = 0;          // nextPow2(max(nChannels, 1))
  int p2pnChannelsPerPeer = 0;   // nextPow2(min over NVL peers of 2*max(1, width/div), nChannels)
  std::vector<int> p2pChannels;  // p2pnChannels entries: i bit-reversed in log2(p2pnChannels) bits
  int initFrom = 0, initTo = 0;  // channels [initFrom, initTo) the caller must initChannel()
};

// Smallest power of two >= max(v, 1).
int nextPow2(int v);

// i with its low `bits` bits in reverse order.
int reverseBits(int i, int bits);

// ncclTopoComputeP2pChannels' per-path-width divisor: 12.0 for compCap 86, 18.0
// for 60..69, 21.0 otherwise (the arm Neuron's sm tags reach).
double nvlWidthDivisor(int compCap);

// ncclTopoComputeP2pChannels. `nvlPathWidths` holds, for every local
// NeuronCore and every peer it reaches over a type-1 (NVL) path, that path's
// width. nChannels is the ring channel count after Postset; outside [0, 32]
// (the original's early clamp, which Postset's cap makes unreachable) is an
// error rather than a half-filled result.
Result<P2pChannels> computeP2pChannels(int nChannels, std::span<const float> nvlPathWidths,
                                       int compCap);

// The fallback when there is no graph (ncclTopoGetLocalNet): rank -> NIC.
using LocalNetFn = std::function<Result<int>(int rank)>;

// ncclTopoGetNetDev, exact: c = channelId % nChannels; the channel's head on
// this node uses the entry-side NIC inter[c][0], every other rank the exit-
// side NIC inter[c][1]. graph == nullptr calls `localNet` (an error if none).
Result<int> netDevForChannel(const topo::TopoGraph* graph, int rank, int channelId,
                             const LocalNetFn& localNet = {});

}  // namespace nccom::rings
