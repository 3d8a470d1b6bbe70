// The recursive core of the OLD search (upstream ncclTopoSearchRec):
// one attempt = a depth-first search that builds channels GPU by GPU,
// following the precomputed paths and reserving bandwidth on every link it
// crosses, releasing it on the way back. Channels nest: when one closes, the
// next is searched on what bandwidth is left, so the best result is the most
// channels x speed the links can carry together.
//
// Candidate order, NET handling and replay follow upstream's
// ncclTopoSearchRecGpu / TryGpu / RecNet / ReplayGetGpu and
// ncclTopoCompareGraphs; the code is ours. Link widths are a private copy: the
// system is never modified.
#pragma once

#include "link_budget.h"

#include <nccom/topo/graph.h>
#include <nccom/topo/system.h>

#include <cstddef>  // before topo/graph.h, which uses size_t without including it
#include <cstdint>
#include <vector>

namespace nccom::topo_nccl {

class RingSearch {
 public:
  // `best` receives every improvement; it must outlive the object.
  RingSearch(const topo::TopoSystem& system, topo::TopoGraph& best);

  struct AttemptResult {
    int64_t remaining = 0;  // budget left; -1 when an optimal graph (maxChannels) was found
    int64_t steps = 0;      // recursion steps taken, PCI-order tries included
  };
  // One attempt with the constraints in `tmp` (speeds, types, crossNic,
  // sameChannels); tmp.nChannels must be 0 and intra/inter sized for
  // maxChannels. Restores every width before returning.
  AttemptResult attempt(topo::TopoGraph& tmp, int64_t budget, int64_t pciOrderBudget);

  // Is `graph` better than `ref` (upstream ncclTopoCompareGraphs): at least
  // minChannels, then more channels x speedIntra, then fewer hops at the
  // same crossNic.
  static bool better(const topo::TopoGraph& graph, const topo::TopoGraph& ref);

 private:
  enum class Order { Free, Pci, Replay };
  static constexpr int kNone = -1;

  // Reserves (mult = +1) or releases (-1) the path from node `from` to
  // `to` at the graph's intra or inter speed. From kNone: nothing to
  // reserve. False (nothing reserved) when the path is missing, of a type
  // beyond the allowed one, or a link lacks bandwidth.
  bool followPath(topo::NodeRef from, topo::NodeRef to, int mult);

  void searchRec();
  void searchFromNets();
  void tryGpu(int step, int backToNet, int backToFirst, Order order, topo::NodeRef from, int g);
  void recGpu(int g, int step, int backToNet, int backToFirst, Order order);
  void exitThroughNet(int g, int step, int backToFirst, Order order);
  void completeChannel();
  std::vector<int> nextGpus(int g, int step, int backToNet);
  int replayGpu(int step) const;

  const topo::TopoSystem& sys_;
  topo::TopoGraph& best_;
  topo::TopoGraph* g_ = nullptr;
  int nGpus_ = 0;
  int nNets_ = 0;
  int backToNet_ = -1;    // ring with NETs: the last GPU goes back to a NET
  int backToFirst_ = -1;  // ring without NETs: the last GPU closes on the first
  int64_t time_ = 0;
  int64_t pciOrderBudget_ = 0;
  int64_t steps_ = 0;
  LinkBudget links_;
  std::vector<int64_t> netWidth_;  // NET nodes' own width, thousandths (shared per NIC port)
  std::vector<int> netChannels_;   // NET nodes' remaining channels (maxconn)
  std::vector<uint64_t> used_;     // per GPU: bit c = used by channel c
};

}  // namespace nccom::topo_nccl
