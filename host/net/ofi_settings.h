// Handing the libfabric plugin's knobs to libnccom-net.so (plugins/net_neuron):
// like the socket plugin it reads no environment and exports optional calls
// instead, which the host finds by dlsym on the plugin's own handle and calls
// after binding and before init:
//   ncclResult_t nccomOfiConfigure(int rails)
//   ncclResult_t nccomOfiConfigureLiveness(int enabled, int check_ms, int grace_ms)
// Each is called only when the plugin exports it; a plugin exporting neither
// is left alone.
//
// Values: net.ofi_rails (NCCOM_OFI_RAILS), net.ofi_liveness
// (NCCOM_OFI_LIVENESS), net.ofi_liveness_check_ms
// (NCCOM_OFI_LIVENESS_CHECK_MS), net.ofi_liveness_grace_ms
// (NCCOM_OFI_LIVENESS_GRACE_MS).
#pragma once

#include "config/config.h"
#include "net/net.h"

#include <nccom/util/result.h>

#include <cstdint>
#include <string>

namespace nccom::net {

inline constexpr const char* kOfiConfigureSymbol = "nccomOfiConfigure";
inline constexpr const char* kOfiConfigureLivenessSymbol = "nccomOfiConfigureLiveness";

// The effective values and where each came from (for messages).
struct OfiSettings {
  std::int64_t rails = 1;
  std::string rails_source = "default";
  bool liveness = true;
  std::string liveness_source = "default";
  std::int64_t check_ms = 100;
  std::string check_source = "default";
  std::int64_t grace_ms = 500;
  std::string grace_source = "default";
};

OfiSettings ofi_settings(const config::Config& config);

// Calls whichever of the two exports `net` has, with `settings`, and logs the
// values at INFO (NET|INIT). A refusal is an NRT_INVALID error naming the
// knobs, their values and sources, and the plugin's rule. Without either
// symbol: success, nothing called.
Status configure_ofi(Net& net, const OfiSettings& settings);

}  // namespace nccom::net
