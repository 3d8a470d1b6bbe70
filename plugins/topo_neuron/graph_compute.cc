#include "graph_compute.h"

#include "fail.h"
#include "graph_fill.h"
#include "kanga.h"

#include <nccom/topo/graph_xml.h>

#include <algorithm>

namespace nccom::topo_neuron {
namespace {

// The host's system must hold exactly this node's ranks, each on the vcore
// the share puts it on (dev = vcore id), else the channels cannot be named.
Status checkSystem(const topo::TopoSystem& sys, const NodeShare& s, const std::vector<int>& vcores,
                   const std::string& where) {
  const int gpus = sys.count(topo::NodeType::GPU);
  if (gpus != static_cast<int>(s.ranks.size()))
    return fail(NRT_INVALID, where + "the system XML has " + std::to_string(gpus) +
                                 " NeuronCores (<gpu>) but the node has " +
                                 std::to_string(s.ranks.size()) + " local ranks");
  for (size_t i = 0; i < s.ranks.size(); ++i) {
    const int g = sys.gpuIndexOfRank(s.ranks[i]);
    if (g < 0)
      return fail(NRT_INVALID,
                  where + "the system XML has no <gpu> for rank " + std::to_string(s.ranks[i]));
    const int dev = sys.of(topo::NodeType::GPU)[static_cast<size_t>(g)].gpu.dev;
    if (dev != vcores[i])
      return fail(NRT_INVALID, where + "the system XML puts rank " + std::to_string(s.ranks[i]) +
                                   " on dev " + std::to_string(dev) + ", the node on vcore " +
                                   std::to_string(vcores[i]));
  }
  return {};
}

// Width of the narrowest direct link between consecutive ranks of any
// channel (closing hop included): what one channel can move inside the node.
// One local rank: the loopback width.
float narrowestHop(const topo::TopoSystem& sys, const topo::TopoGraph& g) {
  if (g.nLocal <= 1) return topo::kLocWidth;
  float narrowest = topo::kLocWidth;
  for (int c = 0; c < g.nChannels; ++c) {
    for (int i = 0; i < g.nLocal; ++i) {
      const int a = sys.gpuIndexOfRank(g.channel(c)[i]);
      const int b = sys.gpuIndexOfRank(g.channel(c)[(i + 1) % g.nLocal]);
      float w = 0.0F;
      for (const auto& l : sys.of(topo::NodeType::GPU)[static_cast<size_t>(a)].links)
        if (l.remote == topo::NodeRef{topo::NodeType::GPU, b}) w = std::max(w, l.width);
      narrowest = std::min(narrowest, w);
    }
  }
  return narrowest;
}

}  // namespace

std::string joinDevs(const std::vector<int>& devs) {
  std::string out;
  for (size_t i = 0; i < devs.size(); ++i) out += (i ? "," : "") + std::to_string(devs[i]);
  return out;
}

Result<ComputedGraph> computeGraph(const PlatformDescription& d, const NodeShare& share,
                                   std::string_view systemXml, const GraphRequest& request,
                                   bool disableVerify) {
  const std::string where = "topo_neuron compute_graph (platform " + d.name + "): ";
  if (request.pattern != static_cast<int>(topo::SearchPattern::Ring))
    return fail(NRT_INVALID, where + "pattern " + std::to_string(request.pattern) +
                                 " requested; only RING (4) is built");
  if (request.maxChannels < 1 || request.minChannels > request.maxChannels)
    return fail(NRT_INVALID, where + "channel range [" + std::to_string(request.minChannels) +
                                 ", " + std::to_string(request.maxChannels) + "] is empty");
  auto vcores = shareVcores(d, share, disableVerify);
  if (!vcores) return vcores.take_error();
  auto doc = topo::parseXml(systemXml, "<system XML for compute_graph>");
  if (!doc) return fail(NRT_INVALID, where + doc.error().message);
  auto sys = topo::buildSystem(*doc, systemOptions(d));
  if (!sys) return fail(NRT_INVALID, where + sys.error().message);
  if (auto st = checkSystem(*sys, share, *vcores, where); !st) return st.take_error();

  auto set = vcoresFromIds(*vcores);
  if (!set) return set.take_error();
  const int cap = std::min(request.maxChannels, topo::kMaxChannels);
  PathsRequest req = makeRequest(d, *set, std::min(cap, kMaxPathsPerRequest));
  req.budget = request.budget;
  auto found = getPaths(d, req);
  if (!found) return found.take_error();

  ComputedGraph out;
  topo::TopoGraph& g = out.graph;
  g.id = 0;
  g.pattern = topo::SearchPattern::Ring;
  g.crossNic = request.crossNic == 1 ? 1 : 0;  // one NIC per channel both ways
  g.minChannels = request.minChannels;
  g.maxChannels = cap;
  FillOptions fo;
  fo.localVcores = *vcores;
  fo.ranks = share.ranks;
  const int nPaths = static_cast<int>(found->corePaths.size());
  const int nNics = static_cast<int>(usableNics(d, found->devices).size());
  fo.nChannels = std::clamp(std::max(nPaths, nNics), std::max(1, request.minChannels), cap);
  if (auto st = fillTopoGraph(g, d, *found, fo); !st) return st.take_error();
  g.speedIntra = narrowestHop(*sys, g);
  g.speedInter = 0.0F;
  for (const auto& net : sys->of(topo::NodeType::NET))
    g.speedInter = std::max(g.speedInter, net.net.width);
  g.nHops = 0;

  auto xml = topo::graphsToXml({&g}, *sys);
  if (!xml) return fail(NRT_INVALID, where + xml.error().message);
  topo::XmlNode& graphXml = *xml->root->children().front();
  if (d.variant == Variant::Trn3SwitchV1) {
    auto lanes = kangaRingPaths(found->corePaths.front(), kSwitchV1KangaLanes);
    if (!lanes) return lanes.take_error();
    const topo_neuron::JbogGeometry geo{static_cast<int>(share.ranks.size()), kSwitchV1NodesPerJbog,
                                        kSwitchV1JbogsPerPod};
    out.crossRackToRack = switchV1CrossRack(share.nNodes, geo);
    out.kangaRing = std::move(*lanes);
    g.crossRackToRack = out.crossRackToRack;
    for (auto st : {graphXml.setInt("crossracktorack", out.crossRackToRack ? 1 : 0),
                    graphXml.setInt("nkangaring", static_cast<int>(out.kangaRing.size()))}) {
      if (!st) return fail(NRT_INVALID, where + st.error().message);
    }
    for (size_t k = 0; k < out.kangaRing.size(); ++k) {
      if (auto st =
              graphXml.setAttribute("kangaring" + std::to_string(k), joinDevs(out.kangaRing[k]));
          !st)
        return fail(NRT_INVALID, where + st.error().message);
    }
  }
  out.xml = topo::writeXml(*xml->root);
  return out;
}

}  // namespace nccom::topo_neuron
