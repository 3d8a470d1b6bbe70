#include "verify.h"

#include "fail.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>

namespace nccom::topo_neuron {

Status verifyTopology(const PlatformSpec& platform, const VerifyInput& in) {
  if (in.disabled) return {};
  const std::set<int> used(in.rankDevices.begin(), in.rankDevices.end());
  const std::set<int> present(in.presentDevices.begin(), in.presentDevices.end());
  std::vector<int> missing;
  for (int d : used)
    if (!present.count(d)) missing.push_back(d);
  if (!missing.empty()) {
    char buf[200];
    std::snprintf(buf, sizeof(buf),
                  "Unsupported topology. Devices with IDs %d and %d are part of topology but "
                  "devices with those IDs are missing",
                  missing.front(), missing.back());
    return fail(NRT_INVALID, buf);
  }
  const int n = static_cast<int>(used.size());
  const auto& allowed = platform.localDeviceCounts;
  if (std::find(allowed.begin(), allowed.end(), n) == allowed.end()) {
    std::string list;
    for (size_t i = 0; i < allowed.size(); ++i) {
      if (i > 0) list += (i + 1 == allowed.size()) ? (allowed.size() > 2 ? ", or " : " or ") : ", ";
      list += std::to_string(allowed[i]);
    }
    return fail(NRT_INVALID, "Unsupported topology: platform " + std::string(platform.name) +
                                 " expects " + list + " local devices but got " +
                                 std::to_string(n));
  }
  return {};
}

Status checkRanksFitCores(int localRanks, int localVcores) {
  if (localRanks <= localVcores) return {};
  return fail(NRT_INVALID, "Unsupported topology: " + std::to_string(localRanks) +
                               " local ranks but only " + std::to_string(localVcores) +
                               " NeuronCores (vcores) on this node; each rank needs its own");
}

}  // namespace nccom::topo_neuron
