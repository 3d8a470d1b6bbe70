/* A well-behaved plugin. Built several times with different names, kinds
 * and versions (see ../CMakeLists.txt). */
#include "test_plugin_state.h"

#ifndef PLUGIN_NAME
#define PLUGIN_NAME "good"
#endif
#ifndef PLUGIN_KIND
#define PLUGIN_KIND NCCOM_PLUGIN_KIND_NET
#endif
#ifndef PLUGIN_VERSION
#define PLUGIN_VERSION "1.0"
#endif
#ifndef PLUGIN_WITH_FINI
#define PLUGIN_WITH_FINI 1
#endif

NCCOM_PLUGIN_EXPORT test_plugin_state_t test_plugin_state;

static nccom_plugin_status_t good_init(const nccom_host_api_t* host, void** plugin_ctx) {
  test_plugin_state.init_calls++;
  test_plugin_state.host = host;
  if (host->log) host->log(NCCOM_LOG_LEVEL_INFO, 1, __FILE__, __LINE__, "%s init", PLUGIN_NAME);
  if (host->config_get) test_plugin_state.greeting = host->config_get(host->host_ctx, "greeting");
  *plugin_ctx = &test_plugin_state;
  return NCCOM_PLUGIN_OK;
}

#if PLUGIN_WITH_FINI
static void good_fini(void* plugin_ctx) {
  test_plugin_state.fini_calls++;
  test_plugin_state.fini_ctx = plugin_ctx;
  if (test_plugin_state.on_fini) test_plugin_state.on_fini(test_plugin_state.on_fini_arg);
}
#endif

static const nccom_plugin_ops_t good_ops = {
    sizeof(nccom_plugin_ops_t),
    0,
    good_init,
#if PLUGIN_WITH_FINI
    good_fini,
#else
    NULL,
#endif
};

NCCOM_PLUGIN_EXPORT const nccom_plugin_descriptor_t nccom_plugin = {
    NCCOM_PLUGIN_ABI_VERSION,
    sizeof(nccom_plugin_descriptor_t),
    PLUGIN_KIND,
    0,
    PLUGIN_NAME,
    PLUGIN_VERSION,
    0x5,
    &good_ops};
