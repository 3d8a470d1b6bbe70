// The bandwidth the OLD search hands out during one attempt: the remaining
// width of every link, in integer thousandths of GB/s (upstream keeps its
// float widths on the same 1/1000 grid with roundf; integers make a release
// restore a link exactly and cost no libm call), and the paths the search
// follows (GPU -> GPU, GPU -> NET, NET -> GPU) compiled once into link slots.
//
// Accounting per link crossed (upstream followPath): the speed, or 6/5 of it
// on the PCI links of a PHB path from a GPU through an Intel CPU; a step into
// a GPU of sm < 80 from a path that did not start at a GPU also charges 1/8
// on the way back; an NVLink into a CPU charges its reverse in full.
#pragma once

#include <nccom/topo/system.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace nccom::topo_nccl {

class LinkBudget {
 public:
  explicit LinkBudget(const topo::TopoSystem& system);

  static int64_t milli(float gbps);
  // Every link back to its full width.
  void reset();

  // Reserves `speed` (thousandths) on every link of the path from -> to.
  // False, with nothing reserved, when a link lacks room or the path is
  // unusable. Only GPU/NET endpoints are planned.
  bool reserve(topo::NodeRef from, topo::NodeRef to, int64_t speed);
  void release(topo::NodeRef from, topo::NodeRef to, int64_t speed);
  // Min of the remaining widths of a GPU's PCI link, both ways; -1 if none.
  int64_t gpuPciWidth(int gpu) const;

 private:
  struct Hop {
    int slot = -1;     // forward link
    int revSlot = -1;  // reverse link charged too, or -1
    int revDiv = 0;    // reverse charge = forward / revDiv
    bool pci = false;
  };
  struct Plan {
    int first = 0;
    int count = 0;
    bool intelPci = false;
    bool usable = false;
  };
  int slotOf(topo::NodeRef from, topo::NodeRef to) const;
  int planIndex(topo::NodeRef from, topo::NodeRef to) const;
  Plan compile(topo::NodeRef from, topo::NodeRef to);
  // Moves `speed` along the first `steps` hops; returns how many had room.
  int move(const Plan& plan, int steps, int64_t speed);

  const topo::TopoSystem& sys_;
  int nGpus_ = 0;
  int nNets_ = 0;
  std::vector<std::vector<int>> slotBase_;  // [type][node] -> first slot of its links
  std::vector<int64_t> full_;               // slot -> full width
  std::vector<int64_t> width_;              // slot -> remaining width
  std::vector<Hop> hops_;
  std::vector<std::pair<int, int>>
      gpuPci_;  // per GPU: its PCI up link and the way back, or {-1, -1}
  std::vector<Plan> plans_;
};

}  // namespace nccom::topo_nccl
