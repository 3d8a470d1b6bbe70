/* The smallest useful nccom-native plugin: it says hello through the host's
 * logger and reads one key of its configuration section. */
#include <nccom/plugin.h>

#include <stddef.h>

static nccom_plugin_status_t hello_init(const nccom_host_api_t* host, void** ctx) {
  const char* greeting = NULL;
  if (host->config_get != NULL) greeting = host->config_get(host->host_ctx, "hello.greeting");
  host->log(NCCOM_LOG_LEVEL_INFO, 1 /* INIT */, __FILE__, __LINE__, "hello plugin: %s",
            greeting != NULL ? greeting : "(no greeting configured)");
  *ctx = NULL;
  return NCCOM_PLUGIN_OK;
}

static void hello_fini(void* ctx) { (void)ctx; }

static const nccom_plugin_ops_t hello_ops = {sizeof(nccom_plugin_ops_t), 0, hello_init, hello_fini};

NCCOM_PLUGIN_EXPORT const nccom_plugin_descriptor_t nccom_plugin = {
    NCCOM_PLUGIN_ABI_VERSION,
    sizeof(nccom_plugin_descriptor_t),
    NCCOM_PLUGIN_KIND_TRANSPORT,
    0,
    "hello",
    "1.0.0",
    0,
    &hello_ops};
