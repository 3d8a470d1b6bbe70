/* Links (without --no-undefined) against a function nobody defines, so an
 * RTLD_NOW dlopen fails with "undefined symbol: nccom_test_missing_function"
 * before the host ever looks at the descriptor. */
#include <nccom/plugin.h>

extern int nccom_test_missing_function(void);

static nccom_plugin_status_t undefined_init(const nccom_host_api_t* host, void** plugin_ctx) {
  (void)host;
  *plugin_ctx = NULL;
  return nccom_test_missing_function() ? NCCOM_PLUGIN_OK : NCCOM_PLUGIN_ERROR;
}

static const nccom_plugin_ops_t undefined_ops = {sizeof(nccom_plugin_ops_t), 0, undefined_init,
                                                 NULL};

NCCOM_PLUGIN_EXPORT const nccom_plugin_descriptor_t nccom_plugin = {
    NCCOM_PLUGIN_ABI_VERSION,
    sizeof(nccom_plugin_descriptor_t),
    NCCOM_PLUGIN_KIND_NET,
    0,
    "undefined",
    "1.0",
    0,
    &undefined_ops};
