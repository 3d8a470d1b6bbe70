/* A stand-in for libnccom-net.so's optional configuration exports, linked
 * into a loopback plugin: it records what the host passed and whether the
 * plugin's init had already run, and applies the real plugin's ranges
 * (docs/internals/net-ofi.md: rails 1..64, check_ms 1..60000, grace_ms
 * 0..600000, enabled 0 or 1).
 *
 * Build-time switches:
 *   OFI_CONF_NO_LIVENESS   export only nccomOfiConfigure
 *   OFI_CONF_REFUSE_RAILS  nccomOfiConfigure answers ncclInvalidArgument */
#include "loopback.h"

typedef struct {
  int rails_calls;
  int rails;
  int rails_init_calls; /* loopback_stats.init_calls when it was called */
  int liveness_calls;
  int enabled;
  int check_ms;
  int grace_ms;
  int liveness_init_calls;
} ofi_conf_stats_t;
LB_EXPORT ofi_conf_stats_t ofi_conf_stats;

LB_EXPORT ncclResult_t nccomOfiConfigure(int rails) {
  ++ofi_conf_stats.rails_calls;
  ofi_conf_stats.rails = rails;
  ofi_conf_stats.rails_init_calls = loopback_stats.init_calls;
#ifdef OFI_CONF_REFUSE_RAILS
  return ncclInvalidArgument;
#else
  return rails >= 1 && rails <= 64 ? ncclSuccess : ncclInvalidArgument;
#endif
}

#ifndef OFI_CONF_NO_LIVENESS
LB_EXPORT ncclResult_t nccomOfiConfigureLiveness(int enabled, int check_ms, int grace_ms) {
  ++ofi_conf_stats.liveness_calls;
  ofi_conf_stats.enabled = enabled;
  ofi_conf_stats.check_ms = check_ms;
  ofi_conf_stats.grace_ms = grace_ms;
  ofi_conf_stats.liveness_init_calls = loopback_stats.init_calls;
  if (enabled != 0 && enabled != 1) return ncclInvalidArgument;
  if (check_ms < 1 || check_ms > 60000 || grace_ms < 0 || grace_ms > 600000) {
    return ncclInvalidArgument;
  }
  return ncclSuccess;
}
#endif
