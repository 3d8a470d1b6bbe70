/*
 * nccom/net_config.h — configuration for network plugins of the ncclNet layout.
 *
 * An ncclNet plugin (nccom/net_v6.h and older) has no nccom descriptor: its
 * init receives only a logger. To declare knobs (nccom/knob.h) and receive
 * their values, such a plugin additionally exports one data symbol,
 * NCCOM_NET_CONFIG_SYMBOL ("nccomNetConfig"), of type nccom_net_config_t. The
 * host looks for it in the plugin's own object after binding the net table
 * and, when it is there:
 *   1. resolves the knobs of [plugins.<name>] (file, cluster section,
 *      environment); a bad value is an error and the net is not used;
 *   2. calls configure() once, before the net's init, with a host API whose
 *      logger works and whose config_get answers the plugin's knobs by key
 *      and the host's settings by dotted name.
 * A plugin without the symbol is used unconfigured, as a plain ncclNet plugin.
 *
 * Pure C99; usable from C++.
 */
#ifndef NCCOM_NET_CONFIG_H
#define NCCOM_NET_CONFIG_H

#include "nccom/knob.h"
#include "nccom/plugin.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NCCOM_NET_CONFIG_SYMBOL "nccomNetConfig"
#define NCCOM_NET_CONFIG_ABI_VERSION 1u

typedef struct nccom_net_config {
  uint32_t struct_size; /* sizeof(nccom_net_config_t) */
  uint32_t abi_version; /* NCCOM_NET_CONFIG_ABI_VERSION */
  /* Mandatory. The plugin's section: [plugins.<name>]. Lower case letters,
   * digits and '_', starting with a letter ("socket", "ofi"). */
  const char* name;
  /* The plugin's knobs; NULL when it declares none. */
  const nccom_knob_table_t* knobs;
  /* Optional (may be NULL). Takes the effective values; `host` and the
   * strings config_get returns stay valid until the plugin is unloaded.
   * On refusal (values that are valid alone but not together, say), return
   * NCCOM_PLUGIN_INVALID_ARGUMENT and write the reason, one sentence naming
   * the keys, into `why` (`why_size` bytes, always at least 256). */
  nccom_plugin_status_t (*configure)(const nccom_host_api_t* host, char* why, size_t why_size);
} nccom_net_config_t;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* NCCOM_NET_CONFIG_H */
