// nccomNetConfig (nccom/net_config.h): the plugin's knobs, [plugins.ofi], and
// the configure() the host calls with their values before init. The plugin
// reads no environment itself; each knob names the variable the host reads
// for it. Ranges and meaning: docs/internals/net-ofi.md ("Devices and rails",
// "Peer liveness").
#include "net_plugin.h"
#include "provider.h"

#include <nccom/net_config.h>
#include <nccom/util/knob_value.h>
#include <nccom/util/log.h>

#include <cstdio>

namespace nccom::ofi {
namespace {

const char* const kEnvRails[] = {"NCCOM_OFI_RAILS", nullptr};
const char* const kEnvLiveness[] = {"NCCOM_OFI_LIVENESS", nullptr};
const char* const kEnvCheck[] = {"NCCOM_OFI_LIVENESS_CHECK_MS", nullptr};
const char* const kEnvGrace[] = {"NCCOM_OFI_LIVENESS_GRACE_MS", nullptr};

const nccom_knob_t kKnobs[] = {
    {"rails", NCCOM_KNOB_INT, 0, "1",
     "Number of consecutive NICs the libfabric network plugin (libnccom-net.so) groups "
     "into one device; each connection uses one of them, round-robin.",
     1, 64, nullptr, kEnvRails},
    {"liveness", NCCOM_KNOB_BOOL, 0, "true",
     "Whether the libfabric network plugin watches each connection's peer over a side TCP "
     "connection, so requests of a peer that closed or died fail with a remote error "
     "instead of staying pending.",
     0, 0, nullptr, kEnvLiveness},
    {"liveness_check_ms", NCCOM_KNOB_INT, 0, "100",
     "How often, in milliseconds, the libfabric network plugin looks at a connection's "
     "liveness socket while that connection has pending requests.",
     1, 60000, nullptr, kEnvCheck},
    {"liveness_grace_ms", NCCOM_KNOB_INT, 0, "500",
     "Milliseconds the libfabric network plugin still lets a connection's requests complete "
     "after it found the peer gone, before failing them.",
     0, 600000, nullptr, kEnvGrace},
};
const nccom_knob_table_t kKnobTable = NCCOM_KNOB_TABLE(kKnobs);

nccom_plugin_status_t configure(const nccom_host_api_t* host, char* why, size_t why_size) {
  if (host == nullptr || host->struct_size < sizeof(nccom_host_api_t)) {
    std::snprintf(why, why_size, "the host API is missing or older than this plugin's SDK");
    return NCCOM_PLUGIN_INVALID_ARGUMENT;
  }
  if (host->log != nullptr) nccom::util::set_logger(host->log);
  // The host's net.efa (a dotted key reads the host's own knobs): how a
  // missing efa provider is reported (provider.h).
  set_efa_mode(host->config_get != nullptr ? host->config_get(host->host_ctx, "net.efa") : nullptr);
  int rails = 0;
  bool liveness = true;
  int check_ms = 0;
  int grace_ms = 0;
  if (!util::knob_int(host, "rails", 1, rails) ||
      !util::knob_bool(host, "liveness", true, liveness) ||
      !util::knob_int(host, "liveness_check_ms", 100, check_ms) ||
      !util::knob_int(host, "liveness_grace_ms", 500, grace_ms)) {
    std::snprintf(why, why_size,
                  "rails, liveness_check_ms and liveness_grace_ms must be decimal integers and "
                  "liveness true or false");
    return NCCOM_PLUGIN_INVALID_ARGUMENT;
  }
  if (!Plugin::configure(rails).ok()) {
    std::snprintf(why, why_size, "rails %d: must be 1 to 64", rails);
    return NCCOM_PLUGIN_INVALID_ARGUMENT;
  }
  if (!Plugin::configure_liveness(liveness ? 1 : 0, check_ms, grace_ms).ok()) {
    std::snprintf(why, why_size,
                  "liveness_check_ms %d, liveness_grace_ms %d: check must be 1 to 60000 and "
                  "grace 0 to 600000",
                  check_ms, grace_ms);
    return NCCOM_PLUGIN_INVALID_ARGUMENT;
  }
  return NCCOM_PLUGIN_OK;
}

}  // namespace
}  // namespace nccom::ofi

extern "C" __attribute__((visibility("default")))
const nccom_net_config_t nccomNetConfig = {sizeof(nccom_net_config_t), NCCOM_NET_CONFIG_ABI_VERSION,
                                           "ofi", &nccom::ofi::kKnobTable, &nccom::ofi::configure};
