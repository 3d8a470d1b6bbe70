#include "graph_fill.h"

#include "fail.h"

#include <algorithm>
#include <set>
#include <string>

namespace nccom::topo_neuron {
namespace {

// Index in `path` where the first device block near `nic` starts, or 0.
size_t headFor(const PlatformDescription& d, const std::vector<int>& path, int nic) {
  if (nic < 0) return 0;
  const auto& near = d.nics[static_cast<size_t>(nic)].devices;
  for (size_t i = 0; i < path.size(); ++i) {
    const int dev = d.vcores[static_cast<size_t>(path[i])].device;
    const bool blockStart = i == 0 || d.vcores[static_cast<size_t>(path[i - 1])].device != dev;
    if (blockStart && std::find(near.begin(), near.end(), dev) != near.end()) return i;
  }
  return 0;
}

}  // namespace

std::vector<int> usableNics(const PlatformDescription& d, const std::vector<int>& devices) {
  std::vector<int> near;
  std::vector<int> all;
  for (const auto& nic : d.nics) {
    all.push_back(nic.id);
    for (int dev : nic.devices) {
      if (std::find(devices.begin(), devices.end(), dev) != devices.end()) {
        near.push_back(nic.id);
        break;
      }
    }
  }
  return near.empty() ? all : near;
}

std::vector<std::array<int, 2>> assignNics(const std::vector<int>& nics, int nChannels) {
  std::vector<std::array<int, 2>> inter;
  for (int c = 0; c < nChannels; ++c) {
    const int nic = nics.empty() ? -1 : nics[static_cast<size_t>(c) % nics.size()];
    inter.push_back({nic, nic});
  }
  return inter;
}

Status fillTopoGraph(topo::TopoGraph& g, const PlatformDescription& d, const SearchResult& r,
                     const FillOptions& opt) {
  if (r.corePaths.empty()) return fail(NRT_INVALID, "topo_neuron: no paths to fill a graph");
  std::vector<int> local = opt.localVcores;
  if (local.empty()) {
    local = r.corePaths.front();
    std::sort(local.begin(), local.end());
  }
  const int nLocal = static_cast<int>(local.size());
  if (nLocal > topo::kMaxLocalRanks)
    return fail(NRT_INVALID, "topo_neuron: " + std::to_string(nLocal) + " local ranks exceed " +
                                 std::to_string(topo::kMaxLocalRanks));
  std::vector<int> ranks = opt.ranks;
  if (ranks.empty()) {
    for (int i = 0; i < nLocal; ++i) ranks.push_back(i);
  }
  if (static_cast<int>(ranks.size()) != nLocal ||
      std::set<int>(ranks.begin(), ranks.end()).size() != ranks.size())
    return fail(NRT_INVALID, "topo_neuron: " + std::to_string(ranks.size()) + " ranks given for " +
                                 std::to_string(nLocal) +
                                 " local vcores; they must match one to one and be distinct");
  for (int v : local) {
    if (v < 0 || v >= d.nVcores())
      return fail(NRT_INVALID, "topo_neuron: vcore " + std::to_string(v) + " is not on platform " +
                                   d.name + " (it has " + std::to_string(d.nVcores()) + " vcores)");
  }
  const std::set<int> localSet(local.begin(), local.end());
  for (size_t p = 0; p < r.corePaths.size(); ++p) {
    const auto& path = r.corePaths[p];
    if (path.size() != local.size() || std::set<int>(path.begin(), path.end()) != localSet)
      return fail(NRT_INVALID, "topo_neuron: path " + std::to_string(p) + " " + formatList(path) +
                                   " does not cover the node's vcores " + formatList(local) +
                                   " exactly once");
  }
  const auto nics = usableNics(d, r.devices);
  const int nPaths = static_cast<int>(r.corePaths.size());
  const int cap =
      std::min(g.maxChannels > 0 ? g.maxChannels : topo::kMaxChannels, topo::kMaxChannels);
  int nChannels = opt.nChannels > 0
                      ? opt.nChannels
                      : std::min(cap, std::max(nPaths, static_cast<int>(nics.size())));
  if (nChannels > topo::kMaxChannels)
    return fail(NRT_INVALID, "topo_neuron: " + std::to_string(nChannels) + " channels exceed " +
                                 std::to_string(topo::kMaxChannels));
  std::vector<int> rankOf(static_cast<size_t>(d.nVcores()), -1);
  for (int i = 0; i < nLocal; ++i)
    rankOf[static_cast<size_t>(local[static_cast<size_t>(i)])] = ranks[static_cast<size_t>(i)];
  auto inter = assignNics(nics, nChannels);
  std::vector<int> intra;
  for (int c = 0; c < nChannels; ++c) {
    const auto& path = r.corePaths[static_cast<size_t>(c % nPaths)];
    const auto row = [&] {
      const size_t head = headFor(d, path, inter[static_cast<size_t>(c)][0]);
      std::vector<int> rotated(path.begin() + static_cast<long>(head), path.end());
      rotated.insert(rotated.end(), path.begin(), path.begin() + static_cast<long>(head));
      return rotated;
    }();
    for (int v : row) intra.push_back(rankOf[static_cast<size_t>(v)]);
  }
  g.nChannels = nChannels;
  g.nLocal = nLocal;
  g.intra = std::move(intra);
  g.inter = std::move(inter);
  g.typeIntra = nLocal == 1 ? topo::PathType::LOC : topo::PathType::NVL;
  g.typeInter = topo::PathType::PIX;
  g.sameChannels = nPaths == 1 ? 1 : 0;
  return {};
}

}  // namespace nccom::topo_neuron
