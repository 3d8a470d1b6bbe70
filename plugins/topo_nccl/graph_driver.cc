#include "graph_driver.h"

#include "system_source.h"

#include <nccom/topo/graph_xml.h>
#include <nccom/topo/paths.h>

#include <algorithm>

namespace nccom::topo_nccl {

Result<topo::TopoSystem> prepareSearchSystem(std::string_view systemXml, const LocalShare& share) {
  auto sys = checkSystemXml(systemXml, "system XML", share);
  if (!sys) return sys.take_error();
  const auto isLocal = [&](int rank) {
    return std::find(share.ranks.begin(), share.ranks.end(), rank) != share.ranks.end();
  };
  for (int g = sys->count(topo::NodeType::GPU) - 1; g >= 0; --g) {
    const auto& gpu = sys->of(topo::NodeType::GPU)[static_cast<std::size_t>(g)];
    if (isLocal(gpu.gpu.rank)) continue;
    NCCOM_SDK_INFO(NCCOM_SUBSYS_GRAPH,
                   "topo_nccl: GPU dev %d (rank %d) is not a local rank of this node, left out",
                   gpu.gpu.dev, gpu.gpu.rank);
    topo::removeNode(*sys, {topo::NodeType::GPU, g});
  }
  if (share.nNodes <= 1 || share.nRanks == share.nLocal()) {
    while (sys->count(topo::NodeType::NET) > 0) topo::removeNode(*sys, {topo::NodeType::NET, 0});
  }
  if (auto st = topo::computePaths(*sys); !st) return st.take_error();
  return sys;
}

Result<std::string> computeGraphXml(std::string_view systemXml, const LocalShare& share,
                                    const SearchRequest& request, const SearchBudgets& budgets) {
  auto sys = prepareSearchSystem(systemXml, share);
  if (!sys) return sys.take_error();
  auto outcome = oldSearch(*sys, request, budgets);
  if (!outcome) return outcome.take_error();
  auto doc = topo::graphsToXml({&outcome->graph}, *sys);
  if (!doc) return doc.take_error();
  return topo::writeXml(*doc->root);
}

}  // namespace nccom::topo_nccl
