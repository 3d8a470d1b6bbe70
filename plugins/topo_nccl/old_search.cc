// The bandwidth-tier descent of the OLD search (upstream ncclTopoCompute).
// See old_search.h and docs/decisions/topo-nccl.md ("The OLD search").
#include "old_search.h"

#include "ring_search.h"

#include <nccom/topo/paths.h>

#include <algorithm>
#include <string>

namespace nccom::topo_nccl {
namespace {

using topo::NodeType;
using topo::PathType;
using topo::SearchPattern;
using topo::TopoGraph;
using topo::TopoSystem;

constexpr int kTierCount = static_cast<int>(kSpeedTiers.size());

PathType raise(PathType t) { return static_cast<PathType>(static_cast<int>(t) + 1); }

Status checkInput(const TopoSystem& sys, const SearchRequest& req) {
  if (req.pattern != SearchPattern::Ring) {
    return make_error(NRT_INVALID, "OLD search: pattern " +
                                       std::to_string(static_cast<int>(req.pattern)) +
                                       " is not implemented (only RING, pattern 4, is ever built)");
  }
  const int n = sys.count(NodeType::GPU);
  if (n == 0)
    return make_error(NRT_INVALID,
                      "OLD search: the system has no GPU (NeuronCore) to put on a ring");
  if (n > topo::kMaxLocalRanks) {
    return make_error(NRT_INVALID, "OLD search: " + std::to_string(n) + " GPUs, at most " +
                                       std::to_string(topo::kMaxLocalRanks) +
                                       " (NCCL_TOPO_MAX_NODES)");
  }
  for (const auto& set : sys.nodes) {
    for (const auto& node : set) {
      for (int t = 0; t < topo::kNodeTypeCount; ++t) {
        if (node.paths[static_cast<std::size_t>(t)].size() !=
            sys.nodes[static_cast<std::size_t>(t)].size()) {
          return make_error(NRT_INVALID,
                            "OLD search: paths are not computed (call computePaths first)");
        }
      }
    }
  }
  if (req.maxChannels < 1 || req.maxChannels > topo::kMaxChannels || req.minChannels < 0 ||
      req.minChannels > req.maxChannels) {
    return make_error(NRT_INVALID, "OLD search: channels min " + std::to_string(req.minChannels) +
                                       " max " + std::to_string(req.maxChannels) +
                                       " outside 0 <= min <= max, 1 <= max <= " +
                                       std::to_string(topo::kMaxChannels));
  }
  if (req.crossNic < 0 || req.crossNic > 2) {
    return make_error(NRT_INVALID, "OLD search: crossNic " + std::to_string(req.crossNic) +
                                       " is not 0, 1 or 2 (auto)");
  }
  return {};
}

// ncclTopoCompute's relaxation step: relax the next knob of the odometer
// (sameChannels is the fastest digit, then typeIntra, typeInter, crossNic, the
// tier). False when every knob is exhausted; tmp is then back at its starting
// values.
class Relaxer {
 public:
  Relaxer(const TopoSystem& sys, bool crossNicAllowed, int seed)
      : nGpus_(sys.count(NodeType::GPU)),
        hasNets_(sys.count(NodeType::NET) > 0),
        crossNicAllowed_(crossNicAllowed),
        seed_(seed),
        tier_(seed) {}

  int tier() const { return tier_; }

  bool next(TopoGraph& tmp, const TopoGraph& best) {
    if (tmp.sameChannels == 1) {
      tmp.sameChannels = 0;
      return true;
    }
    tmp.sameChannels = 1;
    // Intra-node paths may not be worse than the way to the NIC.
    const PathType maxIntra = hasNets_ ? tmp.typeInter : PathType::SYS;
    if (tmp.typeIntra < maxIntra && (best.nChannels == 0 || tmp.typeIntra < best.typeIntra)) {
      tmp.typeIntra = raise(tmp.typeIntra);
      return true;
    }
    tmp.typeIntra = nGpus_ == 1 ? PathType::LOC : PathType::NVL;
    if (hasNets_ && tmp.typeInter < PathType::SYS &&
        (best.nChannels == 0 || tmp.typeInter < best.typeInter || tmp.typeInter < PathType::PXB)) {
      tmp.typeInter = raise(tmp.typeInter);
      return true;
    }
    tmp.typeInter = PathType::PIX;
    // (SPLIT_TREE -> TREE would come here; only RING is searched.)
    if (crossNicAllowed_ && tmp.crossNic == 0) {
      tmp.crossNic = 1;
      return true;
    }
    tmp.crossNic = 0;
    if (tier_ < kTierCount - 1 &&
        (best.nChannels == 0 ||
         kSpeedTiers[static_cast<std::size_t>(tier_ + 1)] / best.speedInter > 0.49F)) {
      ++tier_;
      tmp.speedIntra = tmp.speedInter = kSpeedTiers[static_cast<std::size_t>(tier_)];
      return true;
    }
    tier_ = seed_;
    tmp.speedIntra = tmp.speedInter = kSpeedTiers[static_cast<std::size_t>(tier_)];
    return false;
  }

 private:
  int nGpus_;
  bool hasNets_;
  bool crossNicAllowed_;
  int seed_;
  int tier_;
};

void fallBack(const TopoSystem& sys, TopoGraph& graph) {
  NCCOM_SDK_WARN("Could not find a path for pattern %d, falling back to simple order",
                 static_cast<int>(graph.pattern));
  const auto& gpus = sys.of(NodeType::GPU);
  for (std::size_t i = 0; i < gpus.size(); ++i) graph.intra[i] = gpus[i].gpu.rank;
  graph.inter[0] = {0, 0};
  graph.speedIntra = graph.speedInter = kFallbackSpeed;
  graph.typeIntra = graph.typeInter = PathType::SYS;
  graph.nChannels = 1;
}

// Step 8: fast rings are doubled (the copies run on other channels).
int duplicate(TopoGraph& graph) {
  if (graph.speedIntra < kDuplicateFloor) return 0;
  const int before = graph.nChannels;
  const int dup = std::min(before * 2, graph.maxChannels);
  if (dup == before) return 0;  // already at maxChannels: nothing to copy, speeds unchanged
  const std::size_t n = static_cast<std::size_t>(graph.nLocal);
  for (int c = before; c < dup; ++c) {
    const auto src = static_cast<std::size_t>(c - before);
    std::copy_n(graph.intra.begin() + static_cast<std::ptrdiff_t>(src * n), n,
                graph.intra.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(c) * n));
    graph.inter[static_cast<std::size_t>(c)] = graph.inter[src];
  }
  const float div = static_cast<float>((dup + before - 1) / before);
  graph.speedIntra /= div;
  graph.speedInter /= div;
  graph.nChannels = dup;
  return before;
}

void printGraph(const TopoSystem& sys, const TopoGraph& g) {
  NCCOM_SDK_INFO(NCCOM_SUBSYS_GRAPH,
                 "Pattern %d, crossNic %d, nChannels %d, speed %f/%f, type %s/%s, sameChannels %d",
                 static_cast<int>(g.pattern), g.crossNic, g.nChannels,
                 static_cast<double>(g.speedIntra), static_cast<double>(g.speedInter),
                 topo::pathTypeName(g.typeIntra), topo::pathTypeName(g.typeInter), g.sameChannels);
  const bool nets = sys.count(NodeType::NET) > 0;
  for (int c = 0; c < g.nChannels; ++c) {
    std::string line = (c < 10 ? " " : "") + std::to_string(c) + " :";
    if (nets) line += " NET/" + std::to_string(g.inter[static_cast<std::size_t>(c)][0]);
    for (int i = 0; i < g.nLocal; ++i) line += " GPU/" + std::to_string(g.channel(c)[i]);
    if (nets) line += " NET/" + std::to_string(g.inter[static_cast<std::size_t>(c)][1]);
    NCCOM_SDK_INFO(NCCOM_SUBSYS_GRAPH, "%s", line.c_str());
  }
}

}  // namespace

int seedTier(float width) {
  int i = 0;
  while (i < kTierCount - 1 && kSpeedTiers[static_cast<std::size_t>(i)] > width) ++i;
  return i;
}

Result<SearchOutcome> oldSearch(const TopoSystem& system, const SearchRequest& request,
                                const SearchBudgets& budgets) {
  if (auto st = checkInput(system, request); !st) return st.take_error();
  TopoSystem sys = system;  // the search's widths are computed on our own copy
  topo::computeSearchWidths(sys);
  const int nGpus = sys.count(NodeType::GPU);
  const int nNets = sys.count(NodeType::NET);

  SearchOutcome out;
  TopoGraph& graph = out.graph;
  SearchStats& stats = out.stats;
  graph.pattern = request.pattern;
  graph.minChannels = request.minChannels;
  graph.maxChannels = request.maxChannels;
  graph.nLocal = nGpus;
  graph.intra.assign(static_cast<std::size_t>(graph.maxChannels * nGpus), 0);
  graph.inter.assign(static_cast<std::size_t>(graph.maxChannels), {0, 0});
  // Step 1: cross-NIC is allowed later only with several NETs; "auto" starts without.
  const bool crossNicAllowed = nNets > 1 && request.crossNic != 0;
  graph.crossNic = request.crossNic == 2 ? 0 : request.crossNic;
  graph.speedIntra = graph.speedInter = 0.0F;
  graph.typeIntra = nGpus == 1 ? PathType::LOC : PathType::NVL;
  graph.typeInter = PathType::PIX;
  graph.nChannels = 0;
  graph.sameChannels = 1;

  // Step 3: seed at the first tier the widest path can carry.
  const int seed = seedTier(sys.maxWidth);
  TopoGraph tmp = graph;
  tmp.speedIntra = tmp.speedInter = kSpeedTiers[static_cast<std::size_t>(seed)];
  Relaxer relax(sys, crossNicAllowed, seed);
  RingSearch search(sys, graph);
  int64_t global = budgets.global;

  // Pass 1: attempt, keep the best, relax one knob, again.
  for (;;) {
    const int64_t budget = tmp.sameChannels != 0 ? budgets.sameChannels : budgets.attempt;
    tmp.nChannels = 0;
    const auto r = search.attempt(tmp, budget, budgets.pciOrder);
    ++stats.attempts;
    stats.steps += r.steps;
    const int64_t charged = r.remaining < 0 ? budget : budget - r.remaining;
    stats.chargedSteps += charged;
    global -= charged;
    if (r.remaining == -1) {
      stats.optimal = true;
      break;
    }
    if (static_cast<float>(graph.nChannels) * graph.speedInter >= sys.totalWidth) break;
    if (global <= 0) {
      stats.budgetExhausted = true;
      NCCOM_SDK_INFO(
          NCCOM_SUBSYS_GRAPH,
          "OLD search: budget of %lld steps used up after %d attempts, keeping %d channels",
          static_cast<long long>(budgets.global), stats.attempts, graph.nChannels);
      break;
    }
    if (!relax.next(tmp, graph)) break;
  }

  // Pass 2 re-seeds from the speed found and, for tree patterns only, tries
  // to raise speedIntra; a RING has nothing to gain there, so no attempt runs.

  if (graph.nChannels == 0) {
    fallBack(sys, graph);
    stats.fellBack = true;
  }
  stats.duplicatedFrom = duplicate(graph);
  graph.intra.resize(static_cast<std::size_t>(graph.nChannels * nGpus));
  graph.inter.resize(static_cast<std::size_t>(graph.nChannels));
  graph.minChannels = request.minChannels;
  graph.maxChannels = request.maxChannels;
  printGraph(sys, graph);
  return out;
}

}  // namespace nccom::topo_nccl
