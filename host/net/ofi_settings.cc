#include "net/ofi_settings.h"

#include "log/log.h"
#include "net/nccl_result.h"

#include <climits>

namespace nccom::net {
namespace {

using ConfigureFn = ncclResult_t (*)(int);
using ConfigureLivenessFn = ncclResult_t (*)(int, int, int);

// The plugin's own rules (docs/internals/net-ofi.md), repeated in the
// messages: before init the plugin has no logger, so its own warning is
// dropped and the host's message must carry the whole story.
constexpr const char* kRailsRule = "rails must be 1 to 64";
constexpr const char* kLivenessRule = "check_ms must be 1 to 60000 and grace_ms 0 to 600000";

std::string knob_text(const char* key, std::int64_t value, const std::string& source) {
  return std::string(key) + " = " + std::to_string(value) + " (from " + source + ")";
}

std::string knob_text(const char* key, bool value, const std::string& source) {
  return std::string(key) + " = " + (value ? "true" : "false") + " (from " + source + ")";
}

bool fits_int(std::int64_t value) { return value >= INT_MIN && value <= INT_MAX; }

}  // namespace

OfiSettings ofi_settings(const config::Config& config) {
  OfiSettings s;
  s.rails = config.get_int("net.ofi_rails");
  s.rails_source = config.entry("net.ofi_rails").source.to_string();
  s.liveness = config.get_bool("net.ofi_liveness");
  s.liveness_source = config.entry("net.ofi_liveness").source.to_string();
  s.check_ms = config.get_int("net.ofi_liveness_check_ms");
  s.check_source = config.entry("net.ofi_liveness_check_ms").source.to_string();
  s.grace_ms = config.get_int("net.ofi_liveness_grace_ms");
  s.grace_source = config.entry("net.ofi_liveness_grace_ms").source.to_string();
  return s;
}

Status configure_ofi(Net& net, const OfiSettings& settings) {
  auto configure = reinterpret_cast<ConfigureFn>(net.symbol(kOfiConfigureSymbol));
  auto liveness = reinterpret_cast<ConfigureLivenessFn>(net.symbol(kOfiConfigureLivenessSymbol));
  if (configure == nullptr && liveness == nullptr) return {};
  const std::string plugin = describe(net.info()) + " from " + net.info().origin;
  if (configure != nullptr) {
    const std::string values = knob_text("net.ofi_rails", settings.rails, settings.rails_source);
    // The knob table bounds the value; one outside int is refused, not truncated.
    const ncclResult_t r = fits_int(settings.rails) ? configure(static_cast<int>(settings.rails))
                                                    : ncclInvalidArgument;
    if (r != ncclSuccess) {
      return make_error(NRT_INVALID, "NET/Plugin: " + plugin + " refused " + values + " in " +
                                         kOfiConfigureSymbol + ": " + result_text(r) + "; " +
                                         kRailsRule);
    }
    NCCOM_INFO(log::kNet | log::kInit, "NET/Plugin: %s configured by %s: %s", plugin.c_str(),
               kOfiConfigureSymbol, values.c_str());
  }
  if (liveness != nullptr) {
    const std::string values =
        knob_text("net.ofi_liveness", settings.liveness, settings.liveness_source) + ", " +
        knob_text("net.ofi_liveness_check_ms", settings.check_ms, settings.check_source) + ", " +
        knob_text("net.ofi_liveness_grace_ms", settings.grace_ms, settings.grace_source);
    const ncclResult_t r =
        fits_int(settings.check_ms) && fits_int(settings.grace_ms)
            ? liveness(settings.liveness ? 1 : 0, static_cast<int>(settings.check_ms),
                       static_cast<int>(settings.grace_ms))
            : ncclInvalidArgument;
    if (r != ncclSuccess) {
      return make_error(NRT_INVALID, "NET/Plugin: " + plugin + " refused " + values + " in " +
                                         kOfiConfigureLivenessSymbol + ": " + result_text(r) +
                                         "; " + kLivenessRule);
    }
    NCCOM_INFO(log::kNet | log::kInit, "NET/Plugin: %s configured by %s: %s", plugin.c_str(),
               kOfiConfigureLivenessSymbol, values.c_str());
  }
  return {};
}

}  // namespace nccom::net
