// verifyTopology: the device-count sanity gate that runs before any graph
// search, plus the "more ranks than cores" check.
#pragma once

#include "platform.h"

#include <nccom/util/result.h>

#include <vector>

namespace nccom::topo_neuron {

struct VerifyInput {
  // Device ids that the node's ranks use (one entry per rank is fine;
  // duplicates are ignored).
  std::vector<int> rankDevices;
  // Device ids the runtime reports as present on this node.
  std::vector<int> presentDevices;
  // Mirrors CCOM_DBG_DISABLE_VERIFY_TOPOLOGY; the caller reads the knob.
  bool disabled = false;
};

// Check 1: every device a rank uses is present, else the original's message
// ("Unsupported topology. Devices with IDs %d and %d are part of topology
// but devices with those IDs are missing", naming the first and last missing
// id). Check 2: the number of distinct rank devices is one the platform
// allows (1, 4, 8 or 16 on every platform but Inf2; docs/decisions/topo-neuron.md,
// "Local device counts").
Status verifyTopology(const PlatformSpec& platform, const VerifyInput& in);

// More local ranks than the node has vcores is an error naming both counts.
Status checkRanksFitCores(int localRanks, int localVcores);

}  // namespace nccom::topo_neuron
