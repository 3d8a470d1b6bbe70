// From NEW-search paths to nccom::topo::TopoGraph: per-channel NIC choice
// (inter[c] = {entry NIC, exit NIC}) and the intra rows in local ranks.
#pragma once

#include "search.h"

#include <nccom/topo/graph.h>
#include <nccom/util/result.h>

#include <array>
#include <vector>

namespace nccom::topo_neuron {

// NICs that share a PCIe switch with at least one of `devices`, ascending;
// all NICs when none does. Empty when the node has no NIC.
std::vector<int> usableNics(const PlatformDescription& d, const std::vector<int>& devices);

// Channel c uses NIC nics[c % nics.size()] for entry and exit, so channel
// counts per NIC differ by at most one. {-1, -1} when there is no NIC.
std::vector<std::array<int, 2>> assignNics(const std::vector<int>& nics, int nChannels);

struct FillOptions {
  // The node's vcores; local rank i is vcore localVcores[i]. Empty: the
  // vcores of the search result, ascending.
  std::vector<int> localVcores;
  // Optional explicit rank of each localVcores entry (same length, distinct).
  std::vector<int> ranks;
  // Channels to build; <= 0: max(#paths, #usable NICs), capped by
  // graph.maxChannels and 32. Channel c uses path c % #paths.
  int nChannels = 0;
};

// Fills nChannels, nLocal, intra, inter, typeIntra/typeInter of `g`. Each
// channel's row is its core path rotated so that it starts at a device on
// the channel's NIC's PCIe switch when the ring has one (the head rank
// talks to the NIC). Errors when a path does not cover exactly the node's
// vcores or the ranks are malformed. `g` is changed only on success.
Status fillTopoGraph(topo::TopoGraph& g, const PlatformDescription& d, const SearchResult& r,
                     const FillOptions& opt = {});

}  // namespace nccom::topo_neuron
