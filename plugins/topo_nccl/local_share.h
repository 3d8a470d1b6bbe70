// This node's share of the communicator (nccom_topo_node_t as plain values,
// checked once at the plugin boundary).
#pragma once

#include <nccom/util/result.h>

#include <string>
#include <vector>

namespace nccom::topo_nccl {

struct LocalShare {
  int nRanks = 0;
  int nNodes = 1;
  int node = 0;
  std::vector<int> ranks;    // global ranks on this node, ascending
  std::vector<int> devices;  // Neuron device of each local rank (empty when the host gave none)
  std::vector<int> cores;    // logical core of each local rank within its device (may be empty)

  int nLocal() const { return static_cast<int>(ranks.size()); }
  // "8, 9, 10" (at most the first 16, then "...").
  std::string rankList() const;
};

// Rules: 1 <= n_local <= 256 (NCCL_TOPO_MAX_NODES), ranks distinct and inside
// [0, nRanks), 1 <= nNodes, 0 <= node < nNodes, devices/cores (when given)
// non-negative. The error names the field and the rule.
Status checkShare(const LocalShare& share);

}  // namespace nccom::topo_nccl
