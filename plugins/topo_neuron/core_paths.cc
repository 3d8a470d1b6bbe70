// topology::getPaths and the device -> core expansion.
#include "fail.h"
#include "search.h"

#include <nccom/util/log.h>

#include <algorithm>

namespace nccom::topo_neuron {
namespace {

// Position of `s` in the reflected Gray sequence 0, 1, 3, 2, 6, 7, 5, 4, ...
int grayPosition(int s) {
  int i = 0;
  for (int b = s; b != 0; b >>= 1) i ^= b;
  return i;
}

int generationTag(Platform p) {
  switch (p) {
    case Platform::Sunda: return 2;
    case Platform::Cayman: return 3;
    case Platform::Mariana: return 4;
    case Platform::Emu: return 0;
  }
  return 0;
}

}  // namespace

PathsRequest makeRequest(const PlatformDescription& d, const VcoreSet& available, int max) {
  PathsRequest r;
  r.availableVcores = available;
  r.trnVersion = generationTag(d.platform);
  r.ncPerSengine = d.ncPerSengine;
  r.senginePerMLA = d.senginesPerMla;
  r.ncPerVcore = d.lnc;
  r.max = max;
  return r;
}

VcoreSet firstDevices(const PlatformDescription& d, int nDevices) {
  VcoreSet s;
  for (const auto& v : d.vcores)
    if (v.device < nDevices) s.set(static_cast<size_t>(v.id));
  return s;
}

Result<VcoreSet> vcoresFromIds(const std::vector<int>& ids) {
  VcoreSet s;
  for (int v : ids) {
    if (v < 0 || v >= kMaxVcores)
      return fail(NRT_INVALID, "topo_neuron: vcore id " + std::to_string(v) + " outside [0, " +
                                   std::to_string(kMaxVcores) + ")");
    if (s.test(static_cast<size_t>(v)))
      return fail(NRT_INVALID, "topo_neuron: vcore " + std::to_string(v) +
                                   " is listed twice (two ranks on one NeuronCore)");
    s.set(static_cast<size_t>(v));
  }
  return s;
}

std::vector<int> deviceCoreOrder(const PlatformDescription& d, int device,
                                 const VcoreSet& available) {
  std::vector<int> out;
  for (const auto& v : d.vcores)
    if (v.device == device && available.test(static_cast<size_t>(v.id))) out.push_back(v.id);
  std::stable_sort(out.begin(), out.end(), [&](int a, int b) {
    const auto& va = d.vcores[static_cast<size_t>(a)];
    const auto& vb = d.vcores[static_cast<size_t>(b)];
    const int ga = grayPosition(va.sengine % d.senginesPerMla);
    const int gb = grayPosition(vb.sengine % d.senginesPerMla);
    if (ga != gb) return ga < gb;
    return va.firstNc < vb.firstNc;
  });
  return out;
}

PathContainer getSingleVCorePerDevicePath(const PlatformDescription& d,
                                          const PathContainer& devicePaths,
                                          const VcoreSet& available) {
  PathContainer out;
  for (const auto& ring : devicePaths) {
    std::vector<int> cores;
    for (int dev : ring) cores.push_back(deviceCoreOrder(d, dev, available).front());
    out.push_back(std::move(cores));
  }
  return out;
}

PathContainer convertDevicePathToCorePath(const PlatformDescription& d,
                                          const PathContainer& devicePaths,
                                          const VcoreSet& available) {
  PathContainer out;
  for (const auto& ring : devicePaths) {
    std::vector<int> cores;
    for (int dev : ring) {
      const auto block = deviceCoreOrder(d, dev, available);
      cores.insert(cores.end(), block.begin(), block.end());
    }
    out.push_back(std::move(cores));
  }
  return out;
}

Result<SearchResult> getPaths(const PlatformDescription& d, const PathsRequest& req) {
  if (req.max < 1 || req.max > kMaxPathsPerRequest)
    return fail(NRT_INVALID, "topo_neuron: paths_request.max " + std::to_string(req.max) +
                                 " out of range [1, " + std::to_string(kMaxPathsPerRequest) + "]");
  if (d.senginesPerMla < 1 || d.ncPerSengine < 1 || d.lnc < 1)
    return fail(NRT_INVALID, "topo_neuron: platform " + d.name +
                                 " has a zero SEngine/core geometry; nothing can be searched");
  if (req.ncPerVcore != d.lnc || req.ncPerSengine != d.ncPerSengine ||
      req.senginePerMLA != d.senginesPerMla) {
    return fail(NRT_INVALID, "topo_neuron: paths_request geometry (ncPerVcore " +
                                 std::to_string(req.ncPerVcore) + ", ncPerSengine " +
                                 std::to_string(req.ncPerSengine) + ", senginePerMLA " +
                                 std::to_string(req.senginePerMLA) + ") does not match platform " +
                                 d.name + " (" + std::to_string(d.lnc) + ", " +
                                 std::to_string(d.ncPerSengine) + ", " +
                                 std::to_string(d.senginesPerMla) + ")");
  }
  auto nodes = constructNodes(d, req.availableVcores);
  if (!nodes) return nodes.take_error();
  SearchResult result;
  bool oneVcoreEach = true;
  for (const auto& n : *nodes) {
    result.devices.push_back(n.device);
    oneVcoreEach &= n.vcores.size() == 1;
  }
  Topology topo(std::move(*nodes), req.budget);
  auto rings = topo.findPaths(0, req.max);
  result.stats = topo.stats();
  if (!rings) return rings.take_error();
  for (const auto& ring : *rings) {
    std::vector<int> devs;
    for (int node : ring) devs.push_back(topo.nodes()[static_cast<size_t>(node)].device);
    result.devicePaths.push_back(std::move(devs));
  }
  NCCOM_SDK_INFO(
      NCCOM_SUBSYS_GRAPH, "topo_neuron: %zu ring(s) over devices %s on %s in %llu search steps%s",
      result.devicePaths.size(), formatList(result.devices).c_str(), d.name.c_str(),
      static_cast<unsigned long long>(result.stats.steps),
      result.stats.budgetExhausted ? " (budget reached; fewer rings than requested)" : "");
  result.corePaths = oneVcoreEach
                         ? getSingleVCorePerDevicePath(d, result.devicePaths, req.availableVcores)
                         : convertDevicePathToCorePath(d, result.devicePaths, req.availableVcores);
  return result;
}

}  // namespace nccom::topo_neuron
