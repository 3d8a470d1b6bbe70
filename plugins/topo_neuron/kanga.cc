#include "kanga.h"

#include "fail.h"

#include <algorithm>
#include <string>

namespace nccom::topo_neuron {

Result<PathContainer> duplicatePaths(const std::vector<int>& base, int lanes) {
  if (base.empty()) return fail(NRT_INVALID, "topo_neuron: kangaRing base path is empty");
  if (base.size() > static_cast<size_t>(topo::kKangaPathLen))
    return fail(NRT_INVALID, "topo_neuron: kangaRing path of " + std::to_string(base.size()) +
                                 " entries exceeds " + std::to_string(topo::kKangaPathLen));
  if (lanes < 1) return fail(NRT_INVALID, "topo_neuron: kangaRing needs at least one lane");
  PathContainer paths(static_cast<size_t>(lanes), base);
  if (paths.size() > static_cast<size_t>(topo::kMaxKangaPaths))
    return fail(NRT_INVALID, "topo_neuron: kangaRing: paths.size() <= MAX_KANGA_PATHS (" +
                                 std::to_string(paths.size()) + " paths, at most " +
                                 std::to_string(topo::kMaxKangaPaths) + ")");
  return paths;
}

std::vector<int> rotatePath(const std::vector<int>& path, int offset) {
  if (path.empty()) return {};
  const auto n = static_cast<long>(path.size());
  const long k = ((offset % n) + n) % n;
  std::vector<int> out(path.begin() + k, path.end());
  out.insert(out.end(), path.begin(), path.begin() + k);
  return out;
}

Result<PathContainer> kangaRingPaths(const std::vector<int>& base, int lanes) {
  const int n = static_cast<int>(base.size());
  auto paths = duplicatePaths(base, n > 0 ? std::min(lanes, n) : lanes);
  if (!paths) return paths.take_error();
  const int built = static_cast<int>(paths->size());
  for (int k = 0; k < built; ++k)
    (*paths)[static_cast<size_t>(k)] = rotatePath(base, k * n / built);
  return paths;
}

Result<int> switchV1JbogId(int rank, const JbogGeometry& g) {
  if (g.jbogCount < 1 || g.jbogCount > 3)
    return fail(NRT_INVALID, "topo_neuron: Switch-V1 jbog count " + std::to_string(g.jbogCount) +
                                 " is not 1, 2 or 3");
  if (g.ranksPerNode < 1 || g.nodesPerJbog < 1)
    return fail(NRT_INVALID,
                "topo_neuron: Switch-V1 geometry needs ranksPerNode >= 1 and "
                "nodesPerJbog >= 1");
  if (rank < 0) return fail(NRT_INVALID, "topo_neuron: negative rank " + std::to_string(rank));
  const int node = rank / g.ranksPerNode;
  const int jbog = node / g.nodesPerJbog;
  if (jbog >= g.jbogCount)
    return fail(NRT_INVALID, "topo_neuron: rank " + std::to_string(rank) + " is on node " +
                                 std::to_string(node) + ", beyond " + std::to_string(g.jbogCount) +
                                 " jbog(s) of " + std::to_string(g.nodesPerJbog) + " node(s)");
  return jbog;
}

bool switchV1CrossRack(int nNodes, const JbogGeometry& g) { return nNodes > g.nodesPerJbog; }

}  // namespace nccom::topo_neuron
