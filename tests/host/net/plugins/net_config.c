/* A loopback net plugin that configures itself the way a third-party ncclNet
 * plugin would: it exports nccomNetConfig (nccom/net_config.h) with knobs
 * under the name "ofi" (so the settings libnccom-net.so takes — the
 * NCCOM_OFI_* variables and the [plugins.ofi] file keys — are exercised),
 * and records what the host handed its configure() and whether the plugin's
 * init had already run.
 *
 * Build-time switches:
 *   NETCONF_REFUSE        configure() refuses, with a reason
 *   NETCONF_NO_CONFIGURE  knobs only, configure is NULL
 *   NETCONF_BAD_TABLE     the second knob has no help text
 *   NETCONF_BAD_ABI       abi_version 7 */
#include "loopback.h"

#include <nccom/net_config.h>

#include <stdio.h>
#include <string.h>

typedef struct {
  int configure_calls;
  int init_calls_at_configure; /* loopback_stats.init_calls when configure ran */
  char rails[32];
  char liveness[32];
  char check_ms[32];
  char grace_ms[32];
  char ifname[64]; /* the host's bootstrap.socket_ifname, by dotted name */
} net_config_stats_t;
LB_EXPORT net_config_stats_t net_config_stats;

static const char* const env_rails[] = {"NCCOM_OFI_RAILS", NULL};
static const char* const env_liveness[] = {"NCCOM_OFI_LIVENESS", NULL};
static const char* const env_check[] = {"NCCOM_OFI_LIVENESS_CHECK_MS", NULL};
static const char* const env_grace[] = {"NCCOM_OFI_LIVENESS_GRACE_MS", NULL};

static const nccom_knob_t knobs[] = {
    {"rails", NCCOM_KNOB_INT, 0, "1", "NICs grouped into one device.", 1, 64, NULL, env_rails},
#ifdef NETCONF_BAD_TABLE
    {"liveness", NCCOM_KNOB_BOOL, 0, "true", NULL, 0, 0, NULL, env_liveness},
#else
    {"liveness", NCCOM_KNOB_BOOL, 0, "true", "Watch each peer over a side connection.", 0, 0, NULL,
     env_liveness},
#endif
    {"liveness_check_ms", NCCOM_KNOB_INT, 0, "100", "Liveness poll period in milliseconds.", 1,
     60000, NULL, env_check},
    {"liveness_grace_ms", NCCOM_KNOB_INT, 0, "500", "Grace after a peer is gone, milliseconds.", 0,
     600000, NULL, env_grace},
};
static const nccom_knob_table_t knob_table = NCCOM_KNOB_TABLE(knobs);

#ifndef NETCONF_NO_CONFIGURE
static void copy_answer(const nccom_host_api_t* host, const char* key, char* out, size_t size) {
  const char* text = host->config_get(host->host_ctx, key);
  snprintf(out, size, "%s", text != NULL ? text : "(null)");
}

static nccom_plugin_status_t configure(const nccom_host_api_t* host, char* why, size_t why_size) {
  ++net_config_stats.configure_calls;
  net_config_stats.init_calls_at_configure = loopback_stats.init_calls;
  copy_answer(host, "rails", net_config_stats.rails, sizeof net_config_stats.rails);
  copy_answer(host, "liveness", net_config_stats.liveness, sizeof net_config_stats.liveness);
  copy_answer(host, "liveness_check_ms", net_config_stats.check_ms,
              sizeof net_config_stats.check_ms);
  copy_answer(host, "liveness_grace_ms", net_config_stats.grace_ms,
              sizeof net_config_stats.grace_ms);
  copy_answer(host, "bootstrap.socket_ifname", net_config_stats.ifname,
              sizeof net_config_stats.ifname);
#ifdef NETCONF_REFUSE
  snprintf(why, why_size, "rails %s: this stand-in takes no settings at all",
           net_config_stats.rails);
  return NCCOM_PLUGIN_INVALID_ARGUMENT;
#else
  (void)why;
  (void)why_size;
  return NCCOM_PLUGIN_OK;
#endif
}
#endif

#ifdef NETCONF_BAD_ABI
#define NETCONF_ABI 7u
#else
#define NETCONF_ABI NCCOM_NET_CONFIG_ABI_VERSION
#endif
#ifdef NETCONF_NO_CONFIGURE
#define NETCONF_CONFIGURE NULL
#else
#define NETCONF_CONFIGURE configure
#endif

LB_EXPORT const nccom_net_config_t nccomNetConfig = {sizeof(nccom_net_config_t), NETCONF_ABI, "ofi",
                                                     &knob_table, NETCONF_CONFIGURE};
