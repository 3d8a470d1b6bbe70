/* One deliberately broken descriptor per build, chosen by a BAD_* macro.
 * Every variant's fini aborts: the host must never call fini of a plugin it
 * rejected (or whose init failed). */
#include <nccom/plugin.h>

#include <stdlib.h>

__attribute__((unused)) static nccom_plugin_status_t bad_init(const nccom_host_api_t* host,
                                                              void** plugin_ctx) {
  (void)host;
  *plugin_ctx = NULL;
#ifdef BAD_INIT_ERROR
  return NCCOM_PLUGIN_ERROR;
#else
  return NCCOM_PLUGIN_OK;
#endif
}

static void bad_fini(void* plugin_ctx) {
  (void)plugin_ctx;
  abort();
}

#if defined(BAD_SMALL_OPS)
#define OPS_SIZE 4u
#else
#define OPS_SIZE ((uint32_t)sizeof(nccom_plugin_ops_t))
#endif
#if defined(BAD_NULL_INIT)
#define OPS_INIT NULL
#else
#define OPS_INIT bad_init
#endif

__attribute__((unused)) static const nccom_plugin_ops_t bad_ops = {OPS_SIZE, 0, OPS_INIT, bad_fini};

#if defined(BAD_ABI99)
#define D_ABI 99u
#else
#define D_ABI NCCOM_PLUGIN_ABI_VERSION
#endif
#if defined(BAD_SIZE0)
#define D_SIZE 0u
#else
#define D_SIZE ((uint32_t)sizeof(nccom_plugin_descriptor_t))
#endif
#if defined(BAD_WRONG_KIND)
#define D_KIND NCCOM_PLUGIN_KIND_TOPOLOGY
#elif defined(BAD_UNKNOWN_KIND)
#define D_KIND 7u
#else
#define D_KIND NCCOM_PLUGIN_KIND_NET
#endif
#if defined(BAD_NULL_NAME)
#define D_NAME NULL
#elif defined(BAD_EMPTY_NAME)
#define D_NAME ""
#else
#define D_NAME BAD_PLUGIN_NAME
#endif
#if defined(BAD_NULL_VERSION)
#define D_VERSION NULL
#else
#define D_VERSION "0.0"
#endif
#if defined(BAD_NULL_OPS)
#define D_OPS NULL
#else
#define D_OPS (&bad_ops)
#endif

NCCOM_PLUGIN_EXPORT const nccom_plugin_descriptor_t nccom_plugin = {
    D_ABI, D_SIZE, D_KIND, 0, D_NAME, D_VERSION, 0, D_OPS};
