// The recursive core of the OLD search. See ring_search.h and
// docs/decisions/topo-nccl.md, "Recursive core".
#include "ring_search.h"

#include <algorithm>

namespace nccom::topo_nccl {
namespace {

using topo::LinkType;
using topo::NodeRef;
using topo::NodeType;
using topo::PathType;
using topo::TopoGraph;
using topo::TopoNode;
using topo::TopoPath;

constexpr int kGpu = static_cast<int>(NodeType::GPU);

// A candidate next GPU and what decides its place in the order.
struct Candidate {
  int g = 0;
  int startIndex = 0;  // distance after the current GPU (least important)
  int intraHops = 0;
  int intraWidth = 0;
  int interHops = 0;
  int interPciWidth = 0;
  int interWidth = 0;  // most important
};

bool candidateBefore(const Candidate& a, const Candidate& b) {
  if (a.interWidth != b.interWidth) return a.interWidth > b.interWidth;
  if (a.interPciWidth != b.interPciWidth) return a.interPciWidth > b.interPciWidth;
  if (a.interHops != b.interHops) return a.interHops < b.interHops;
  if (a.intraWidth != b.intraWidth) return a.intraWidth > b.intraWidth;
  if (a.intraHops != b.intraHops) return a.intraHops < b.intraHops;
  return a.startIndex < b.startIndex;
}

}  // namespace

RingSearch::RingSearch(const topo::TopoSystem& system, TopoGraph& best)
    : sys_(system),
      best_(best),
      nGpus_(system.count(NodeType::GPU)),
      nNets_(system.count(NodeType::NET)),
      links_(system) {
  // RING: with NETs the channel enters from a NET and the last GPU goes back
  // to one; without, the last GPU closes the ring on the first.
  if (nNets_ > 0) {
    backToNet_ = nGpus_ - 1;
  } else {
    backToFirst_ = nGpus_ - 1;
  }
}

bool RingSearch::better(const TopoGraph& graph, const TopoGraph& ref) {
  if (graph.nChannels < graph.minChannels) return false;
  const float mine = static_cast<float>(graph.nChannels) * graph.speedIntra;
  const float theirs = static_cast<float>(ref.nChannels) * ref.speedIntra;
  if (mine != theirs) return mine > theirs;
  return graph.crossNic == ref.crossNic && graph.nHops < ref.nHops;
}

RingSearch::AttemptResult RingSearch::attempt(TopoGraph& tmp, int64_t budget,
                                              int64_t pciOrderBudget) {
  g_ = &tmp;
  tmp.nHops = 0;
  links_.reset();
  netWidth_.clear();
  netChannels_.clear();
  for (const TopoNode& net : sys_.of(NodeType::NET)) {
    netWidth_.push_back(LinkBudget::milli(net.net.width));
    netChannels_.push_back(net.net.maxConn);
  }
  used_.assign(static_cast<std::size_t>(nGpus_), 0);
  time_ = budget;
  pciOrderBudget_ = pciOrderBudget;
  steps_ = 0;
  searchRec();
  g_ = nullptr;
  return {time_, steps_};
}

bool RingSearch::followPath(NodeRef from, NodeRef to, int mult) {
  if (from.index == kNone || from == to) return true;
  const TopoPath& path =
      sys_.at(from).paths[static_cast<std::size_t>(to.type)][static_cast<std::size_t>(to.index)];
  // Stricter than upstream, which treats a missing path like a free one.
  if (!path.reachable() || path.count() == 0) return false;
  const bool intra = from.type == NodeType::GPU && to.type == NodeType::GPU;
  const int64_t speed = LinkBudget::milli(intra ? g_->speedIntra : g_->speedInter);
  if (mult < 0) {
    links_.release(from, to, speed);
  } else {
    const PathType allowed = intra ? g_->typeIntra : g_->typeInter;
    if (static_cast<int>(path.type) > static_cast<int>(allowed)) return false;
    if (!links_.reserve(from, to, speed)) return false;
  }
  g_->nHops += mult * path.count();
  return true;
}

int RingSearch::replayGpu(int step) const {
  const int c = g_->nChannels;
  if (c == 0) return -1;
  const int rank = g_->intra[static_cast<std::size_t>((c - 1) * nGpus_ + step + 1)];
  return sys_.gpuIndexOfRank(rank);
}

void RingSearch::searchRec() {
  if (nNets_ > 0) {
    searchFromNets();
    return;
  }
  const NodeRef none{NodeType::GPU, kNone};
  if (g_->nChannels == 0) {
    tryGpu(0, backToNet_, backToFirst_, Order::Pci, none, 0);
  } else if (const int g = replayGpu(-1); g >= 0) {
    tryGpu(0, backToNet_, backToFirst_, Order::Replay, none, g);
  }
  if (g_->sameChannels == 0 || g_->nChannels == 0) {
    for (int g = 0; g < nGpus_; ++g) tryGpu(0, backToNet_, backToFirst_, Order::Free, none, g);
  }
}

void RingSearch::searchFromNets() {
  const int c = g_->nChannels;
  const float speed = g_->speedInter;
  const int64_t speedMilli = LinkBudget::milli(speed);
  const auto& nets = sys_.of(NodeType::NET);
  for (int n = 0; n < nNets_; ++n) {
    const TopoNode& net = nets[static_cast<std::size_t>(n)];
    if (netWidth_[static_cast<std::size_t>(n)] < speedMilli ||
        netChannels_[static_cast<std::size_t>(n)] <= 0)
      continue;
    g_->inter[static_cast<std::size_t>(c)][0] = static_cast<int>(net.id);
    // Ports of one NIC share its bandwidth.
    auto chargePort = [&](int64_t delta) {
      for (int i = 0; i < nNets_; ++i) {
        const auto& other = nets[static_cast<std::size_t>(i)].net;
        if (other.guid == net.net.guid && other.port == net.net.port) {
          netWidth_[static_cast<std::size_t>(i)] += delta;
        }
      }
    };
    chargePort(-speedMilli);
    --netChannels_[static_cast<std::size_t>(n)];
    const NodeRef from{NodeType::NET, n};

    if (c > 0) {
      if (const int g = replayGpu(-1); g >= 0)
        tryGpu(0, backToNet_, backToFirst_, Order::Replay, from, g);
    }
    if (c == 0 || g_->sameChannels == 0) {
      if (c == 0) {
        // A quick reference in PCI order first, on its own small budget.
        const int64_t saved = time_;
        time_ = pciOrderBudget_;
        tryGpu(0, backToNet_, backToFirst_, Order::Pci, from, 0);
        time_ = time_ == -1 ? -1 : saved;
      }
      // Then start from the GPUs closest to this NET, those whose PCI link
      // still has bandwidth both ways first.
      const auto& paths = net.paths[kGpu];
      float maxWidth = 0.0F;
      int minHops = 0;
      for (const TopoPath& p : paths) {
        if (!p.reachable()) continue;
        if (p.width > maxWidth || (p.width == maxWidth && p.count() < minHops)) {
          maxWidth = p.width;
          minHops = p.count();
        }
      }
      if (maxWidth >= speed) {
        for (int bidirPass = 0; bidirPass < 2; ++bidirPass) {
          for (int g = 0; g < nGpus_; ++g) {
            const TopoPath& p = paths[static_cast<std::size_t>(g)];
            if (p.width != maxWidth || p.count() != minHops) continue;
            const int pciUsed = links_.gpuPciWidth(g) > 0 ? 0 : 1;
            if (pciUsed == bidirPass) tryGpu(0, backToNet_, backToFirst_, Order::Free, from, g);
          }
        }
      }
    }
    ++netChannels_[static_cast<std::size_t>(n)];
    chargePort(speedMilli);
  }
}

void RingSearch::tryGpu(int step, int backToNet, int backToFirst, Order order, NodeRef from,
                        int g) {
  if (g < 0 || g >= nGpus_) return;
  const NodeRef to{NodeType::GPU, g};
  if (!followPath(from, to, 1)) return;
  const uint64_t flag = uint64_t{1} << g_->nChannels;
  used_[static_cast<std::size_t>(g)] ^= flag;
  recGpu(g, step, backToNet, backToFirst, order);
  used_[static_cast<std::size_t>(g)] ^= flag;
  followPath(from, to, -1);
}

void RingSearch::recGpu(int g, int step, int backToNet, int backToFirst, Order order) {
  if (time_ <= 0) return;
  --time_;
  ++steps_;
  const int c = g_->nChannels;
  if (step == nGpus_) {
    completeChannel();
    return;
  }
  g_->intra[static_cast<std::size_t>(c * nGpus_ + step)] =
      sys_.of(NodeType::GPU)[static_cast<std::size_t>(g)].gpu.rank;
  const NodeRef here{NodeType::GPU, g};
  if (step == backToNet) {
    exitThroughNet(g, step, backToFirst, order);
  } else if (step < nGpus_ - 1) {
    std::vector<int> next;
    if (order == Order::Pci) {
      next.push_back(step + 1);
    } else if (order == Order::Replay) {
      next.push_back(replayGpu(step));
    } else {
      next = nextGpus(g, step, backToNet);
    }
    for (const int n : next) tryGpu(step + 1, backToNet, backToFirst, order, here, n);
  } else if (step == backToFirst) {
    const int first = sys_.gpuIndexOfRank(g_->intra[static_cast<std::size_t>(c * nGpus_)]);
    const NodeRef firstRef{NodeType::GPU, first};
    if (first >= 0 && followPath(here, firstRef, 1)) {
      recGpu(first, step + 1, backToNet, -1, order);
      followPath(here, firstRef, -1);
    }
  } else {
    recGpu(g, nGpus_, -1, -1, order);
  }
}

void RingSearch::exitThroughNet(int g, int step, int backToFirst, Order order) {
  const int c = g_->nChannels;
  const int start = sys_.find(NodeType::NET, g_->inter[static_cast<std::size_t>(c)][0]);
  if (start < 0) return;
  const auto& nets = sys_.of(NodeType::NET);
  const auto& startNet = nets[static_cast<std::size_t>(start)].net;
  for (int n = 0; n < nNets_; ++n) {
    const TopoNode& net = nets[static_cast<std::size_t>(n)];
    // Without crossNic the channel leaves through the port it came in by.
    if (g_->crossNic != 1 && (net.net.guid != startNet.guid || net.net.port != startNet.port))
      continue;
    const NodeRef here{NodeType::GPU, g};
    const NodeRef to{NodeType::NET, n};
    if (!followPath(here, to, 1)) continue;
    g_->inter[static_cast<std::size_t>(c)][1] = static_cast<int>(net.id);
    recGpu(g, step, -1, backToFirst, order);
    followPath(here, to, -1);
  }
}

void RingSearch::completeChannel() {
  ++g_->nChannels;
  if (better(*g_, best_)) {
    best_ = *g_;
    if (g_->nChannels == g_->maxChannels) time_ = -1;
  }
  if (g_->nChannels < g_->maxChannels) searchRec();
  --g_->nChannels;
}

std::vector<int> RingSearch::nextGpus(int g, int step, int backToNet) {
  // Whether to rank candidates by their way to the channel's NET: always
  // when there is one, and when the next GPU is the last before the NET it
  // decides alone (sortNet 1); otherwise (-1) equal intra scores mean the
  // candidates are walked in reverse.
  const int sortNet = backToNet == -1 ? 0 : (backToNet == step + 1 ? 1 : -1);
  const std::vector<TopoPath>* netPaths = nullptr;
  if (sortNet != 0) {
    const int n = sys_.find(NodeType::NET, g_->inter[static_cast<std::size_t>(g_->nChannels)][0]);
    if (n >= 0) netPaths = &sys_.of(NodeType::NET)[static_cast<std::size_t>(n)].paths[kGpu];
  }
  const uint64_t flag = uint64_t{1} << g_->nChannels;
  const auto& paths = sys_.of(NodeType::GPU)[static_cast<std::size_t>(g)].paths[kGpu];
  std::vector<Candidate> cands;
  for (int i = 1; i < nGpus_; ++i) {
    const int h = (g + i) % nGpus_;
    const TopoPath& p = paths[static_cast<std::size_t>(h)];
    if (!p.reachable() || p.count() == 0) continue;
    if ((used_[static_cast<std::size_t>(h)] & flag) != 0) continue;
    Candidate s;
    s.g = h;
    s.startIndex = i;
    s.intraHops = p.count();
    s.intraWidth = static_cast<int>(p.width);  // whole GB/s, as upstream's int scores
    if (netPaths != nullptr) {
      const TopoPath& np = (*netPaths)[static_cast<std::size_t>(h)];
      s.interHops = np.count();
      const int64_t pci = links_.gpuPciWidth(h);
      s.interPciWidth = pci < 0 ? -1 : static_cast<int>(pci / 1000);
      s.interWidth = static_cast<int>(np.width);
    }
    cands.push_back(s);
  }
  std::sort(cands.begin(), cands.end(), candidateBefore);
  const bool allSameIntra = std::all_of(cands.begin(), cands.end(), [&](const Candidate& s) {
    return s.intraWidth == cands.front().intraWidth && s.intraHops == cands.front().intraHops;
  });
  std::vector<int> next;
  next.reserve(cands.size());
  for (const Candidate& s : cands) next.push_back(s.g);
  if (sortNet == -1 && allSameIntra) std::reverse(next.begin(), next.end());
  return next;
}

}  // namespace nccom::topo_nccl
