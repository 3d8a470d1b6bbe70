#include "environment.h"

#include "config/value.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace nccom::tools {
namespace {

// Variables read outside the knob tables: the loader's, the tools' and the
// build scripts'.
constexpr std::array<std::string_view, 7> kOtherKnown = {
    "NCCOM_CONFIG", "NCCOM_CLUSTER",    "NCCOM_RAS_ADDR",      "NCCOM_RAS_REGISTRY",
    "NCCOM_CCACHE", "NCCOM_LINT_CACHE", "NCCOM_HELLO_GREETING"};
// Prefixes of a tool's own variables (nccom-test's launcher and its ranks).
constexpr std::array<std::string_view, 1> kKnownPrefixes = {"NCCOM_TEST_"};

// NCCL settings that users carry over and that nccom does not read: their
// effect is decided elsewhere here (the runtime, the topology plugins), or
// does not exist on Neuron.
constexpr std::array<std::string_view, 24> kNcclNotRead = {
    "NCCL_ALGO",           "NCCL_PROTO",         "NCCL_BUFFSIZE",       "NCCL_MAX_NCHANNELS",
    "NCCL_MIN_NCHANNELS",  "NCCL_NTHREADS",      "NCCL_P2P_DISABLE",    "NCCL_P2P_LEVEL",
    "NCCL_SHM_DISABLE",    "NCCL_NET_GDR_LEVEL", "NCCL_NET_GDR_READ",   "NCCL_IB_HCA",
    "NCCL_IB_DISABLE",     "NCCL_IB_TIMEOUT",    "NCCL_IB_RETRY_CNT",   "NCCL_CROSS_NIC",
    "NCCL_COLLNET_ENABLE", "NCCL_NVLS_ENABLE",   "NCCL_LAUNCH_MODE",    "NCCL_CUMEM_ENABLE",
    "NCCL_MAX_CTAS",       "NCCL_MIN_CTAS",      "NCCL_TREE_THRESHOLD", "NCCL_LL_THRESHOLD"};

bool ours(std::string_view name) {
  return name.starts_with("NCCOM_") || name.starts_with("CCOM_") ||
         name.starts_with("NEURON_CCOM_");
}

}  // namespace

std::string closest_name(const std::string& word, const std::vector<std::string>& candidates) {
  return std::string(
      config::detail::closest(word, candidates, std::max<std::size_t>(3, word.size() / 4)));
}

std::vector<EnvNote> environment_notes(const std::set<std::string>& known,
                                       const std::vector<std::string>& environ_names) {
  std::set<std::string> all = known;
  for (std::string_view k : kOtherKnown) all.insert(std::string(k));
  const std::vector<std::string> candidates(all.begin(), all.end());
  std::vector<EnvNote> notes;
  for (const std::string& name : environ_names) {
    if (all.count(name) != 0) continue;
    if (std::any_of(kKnownPrefixes.begin(), kKnownPrefixes.end(),
                    [&](std::string_view p) { return name.starts_with(p); }))
      continue;
    if (ours(name)) {
      notes.push_back({name, closest_name(name, candidates), false});
    } else if (std::find(kNcclNotRead.begin(), kNcclNotRead.end(), name) != kNcclNotRead.end()) {
      notes.push_back({name, "", true});
    }
  }
  std::sort(notes.begin(), notes.end(),
            [](const EnvNote& a, const EnvNote& b) { return a.name < b.name; });
  return notes;
}

}  // namespace nccom::tools
