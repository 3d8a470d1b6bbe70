/* The smallest useful nccom-native plugin: it declares one knob, `greeting`,
 * and says it through the host's logger at init.
 *
 * What it shows:
 *  - a knob is declared in the descriptor's knob table; the host resolves it
 *    from [plugins.hello] in the configuration file, the active cluster's
 *    section and the environment (NCCOM_HELLO_GREETING) before init, and
 *    refuses a bad setting (a misspelt key, say) naming the key and file;
 *  - the plugin reads the resolved value by its own key, without a dot:
 *    config_get(host_ctx, "greeting");
 *  - every struct the host hands over is size-first: a field is read only
 *    when struct_size says it is there (a host built against an older SDK
 *    hands a shorter struct). */
#include <nccom/plugin.h>

#include <stddef.h>

static const char* const greeting_env[] = {"NCCOM_HELLO_GREETING", NULL};

static const nccom_knob_t hello_knobs[] = {
    /* key, type, flags, default, help, min, max, enum names, environment */
    {"greeting", NCCOM_KNOB_STRING, 0, "hello",
     "What the plugin says once at init, through the host's logger (INFO, subsystem INIT).", 0, 0,
     NULL, greeting_env},
};
static const nccom_knob_table_t hello_knob_table = NCCOM_KNOB_TABLE(hello_knobs);

/* Whether the host API the host handed over has `field`. */
#define HOST_HAS(host, field) \
  ((host)->struct_size >= offsetof(nccom_host_api_t, field) + sizeof((host)->field))

static nccom_plugin_status_t hello_init(const nccom_host_api_t* host, void** ctx) {
  if (host == NULL || ctx == NULL || !HOST_HAS(host, log) || host->log == NULL) {
    return NCCOM_PLUGIN_INVALID_ARGUMENT; /* no logger: nothing to say hello through */
  }
  *ctx = NULL;
  const char* greeting = NULL;
  if (HOST_HAS(host, host_ctx) && host->config_get != NULL) {
    greeting = host->config_get(host->host_ctx, "greeting"); /* the knob's resolved value */
  }
  if (greeting != NULL) {
    host->log(NCCOM_LOG_LEVEL_INFO, 1 /* INIT */, __FILE__, __LINE__, "hello plugin: %s", greeting);
  } else {
    /* A host that offers no configuration: the knob's default. */
    host->log(NCCOM_LOG_LEVEL_INFO, 1 /* INIT */, __FILE__, __LINE__,
              "hello plugin: %s (the host offers no configuration: the default)",
              hello_knobs[0].default_text);
  }
  return NCCOM_PLUGIN_OK;
}

static void hello_fini(void* ctx) { (void)ctx; }

static const nccom_plugin_ops_t hello_ops = {
    .struct_size = sizeof(nccom_plugin_ops_t),
    .reserved = 0,
    .init = hello_init,
    .fini = hello_fini,
};

/* The one exported symbol. struct_size covers `knobs`, so the host reads it. */
NCCOM_PLUGIN_EXPORT const nccom_plugin_descriptor_t nccom_plugin = {
    .abi_version = NCCOM_PLUGIN_ABI_VERSION,
    .struct_size = sizeof(nccom_plugin_descriptor_t),
    .kind = NCCOM_PLUGIN_KIND_TRANSPORT,
    .reserved = 0,
    .name = "hello",
    .plugin_version = "1.0.0",
    .capabilities = 0,
    .ops = &hello_ops,
    .knobs = &hello_knob_table,
};
