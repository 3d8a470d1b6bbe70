/* A topology plugin for the host adapter's tests, built in several variants:
 *   default          probe says yes for arch "emu", returns fixed texts,
 *                    counts free_text calls;
 *   TOPO_FAILS       get_system_xml fails with a message;
 *   TOPO_NO_GRAPH    no compute_graph slot;
 *   TOPO_UNSUPPORTED compute_graph answers UNSUPPORTED;
 *   TOPO_OLD_OPS     ops_version 0 (an older SDK);
 *   TOPO_SHORT_OPS   a vtable that stops after the common head;
 *   TOPO_NULL_PROBE  the mandatory probe slot is NULL;
 *   TOPO_NO_TEXT     returns OK without a text;
 *   TOPO_PRE_CATALOGUE sets list_platforms and describe_node but declares a
 *                    struct_size that ends before them (an older SDK's). */
#include <nccom/topo_plugin.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Some variants leave functions out of their vtable on purpose. */
#define MAYBE_UNUSED __attribute__((unused))

NCCOM_PLUGIN_EXPORT int topo_test_free_calls;
NCCOM_PLUGIN_EXPORT int topo_test_last_request_max_channels;

static nccom_plugin_status_t topo_init(const nccom_host_api_t* host, void** ctx) {
  (void)host;
  *ctx = &topo_test_free_calls;
  return NCCOM_PLUGIN_OK;
}

static char* dup_text(const char* s) {
  char* out = malloc(strlen(s) + 1);
  if (out != NULL) strcpy(out, s);
  return out;
}

MAYBE_UNUSED static nccom_plugin_status_t topo_probe(void* ctx, const nccom_topo_machine_t* m,
                                                     char* why, size_t why_len) {
  (void)ctx;
  if (strcmp(m->arch_name, "emu") == 0) return NCCOM_PLUGIN_OK;
  snprintf(why, why_len, "arch %s is not emu", m->arch_name);
  return NCCOM_PLUGIN_UNSUPPORTED;
}

MAYBE_UNUSED static nccom_plugin_status_t topo_system(void* ctx, const nccom_topo_machine_t* m,
                                                      const nccom_topo_node_t* node, char** xml,
                                                      char* err, size_t err_len) {
  (void)ctx;
  (void)m;
#if defined(TOPO_FAILS)
  (void)xml;
  snprintf(err, err_len, "device %d has no PCI address", node->n_local);
  return NCCOM_PLUGIN_ERROR;
#elif defined(TOPO_NO_TEXT)
  (void)err;
  (void)err_len;
  (void)node;
  *xml = NULL;
  return NCCOM_PLUGIN_OK;
#else
  char buf[128];
  (void)err;
  (void)err_len;
  snprintf(buf, sizeof buf, "<system version=\"1\" nlocal=\"%d\"/>", node->n_local);
  *xml = dup_text(buf);
  return NCCOM_PLUGIN_OK;
#endif
}

#if !defined(TOPO_NO_GRAPH)
MAYBE_UNUSED static nccom_plugin_status_t topo_graph(void* ctx, const nccom_topo_machine_t* m,
                                                     const nccom_topo_node_t* node,
                                                     const char* system_xml,
                                                     const nccom_topo_graph_request_t* req,
                                                     char** out, char* err, size_t err_len) {
  (void)ctx;
  (void)m;
  (void)node;
  (void)err;
  (void)err_len;
  topo_test_last_request_max_channels = req->max_channels;
#if defined(TOPO_UNSUPPORTED)
  (void)system_xml;
  (void)out;
  return NCCOM_PLUGIN_UNSUPPORTED;
#else
  char buf[256];
  snprintf(buf, sizeof buf, "<graphs version=\"1\" from=\"%s\"/>", system_xml);
  *out = dup_text(buf);
  return NCCOM_PLUGIN_OK;
#endif
}
#endif

MAYBE_UNUSED static nccom_plugin_status_t topo_order(void* ctx, const nccom_topo_machine_t* m,
                                                     int32_t n, const int32_t* pod_ids,
                                                     int32_t* order, char* err, size_t err_len) {
  (void)ctx;
  (void)m;
  (void)pod_ids;
#if defined(TOPO_UNSUPPORTED)
  (void)n;
  (void)order;
  (void)err;
  (void)err_len;
  return NCCOM_PLUGIN_UNSUPPORTED;
#elif defined(TOPO_BAD_ORDER)
  (void)err;
  (void)err_len;
  for (int32_t i = 0; i < n; ++i) order[i] = 0;
  return NCCOM_PLUGIN_OK;
#else
  (void)err;
  (void)err_len;
  for (int32_t i = 0; i < n; ++i) order[i] = n - 1 - i; /* reverse */
  return NCCOM_PLUGIN_OK;
#endif
}

/* Fixed answers; FAILS refuses both, UNSUPPORTED has nothing to list. */
MAYBE_UNUSED static nccom_plugin_status_t topo_list(void* ctx, char** xml, char* err,
                                                    size_t err_len) {
  (void)ctx;
#if defined(TOPO_FAILS)
  (void)xml;
  snprintf(err, err_len, "the platform table is corrupt");
  return NCCOM_PLUGIN_ERROR;
#elif defined(TOPO_UNSUPPORTED)
  (void)xml;
  (void)err;
  (void)err_len;
  return NCCOM_PLUGIN_UNSUPPORTED;
#else
  (void)err;
  (void)err_len;
  *xml = dup_text("<platforms><platform name=\"box\"/></platforms>");
  return *xml != NULL ? NCCOM_PLUGIN_OK : NCCOM_PLUGIN_SYSTEM_ERROR;
#endif
}

MAYBE_UNUSED static nccom_plugin_status_t topo_describe(void* ctx, const nccom_topo_machine_t* m,
                                                        char** xml, char* err, size_t err_len) {
  (void)ctx;
#if defined(TOPO_FAILS)
  (void)xml;
  snprintf(err, err_len, "no instance with %d devices", m->device_count);
  return NCCOM_PLUGIN_INVALID_ARGUMENT;
#else
  char buf[64];
  (void)err;
  (void)err_len;
  snprintf(buf, sizeof buf, "<node devices=\"%d\"/>", m->device_count);
  *xml = dup_text(buf);
  return *xml != NULL ? NCCOM_PLUGIN_OK : NCCOM_PLUGIN_SYSTEM_ERROR;
#endif
}

MAYBE_UNUSED static void topo_free(void* ctx, char* text) {
  (void)ctx;
  topo_test_free_calls++;
  free(text);
}

#if defined(TOPO_SHORT_OPS)
static const nccom_plugin_ops_t topo_ops = {sizeof(nccom_plugin_ops_t), 0, topo_init, NULL};
#define TOPO_OPS_PTR (&topo_ops)
#else
/* One slot per line; the build variant chooses some of them. */
/* clang-format off */
static const nccom_topo_ops_t topo_ops = {
#if defined(TOPO_PRE_CATALOGUE)
    {offsetof(nccom_topo_ops_t, list_platforms), 0, topo_init, NULL},
#else
    {sizeof(nccom_topo_ops_t), 0, topo_init, NULL},
#endif
#if defined(TOPO_OLD_OPS)
    0,
#else
    NCCOM_TOPO_OPS_VERSION,
#endif
    0,
#if defined(TOPO_NULL_PROBE)
    NULL,
#else
    topo_probe,
#endif
    topo_system,
#if defined(TOPO_NO_GRAPH)
    NULL,
#else
    topo_graph,
#endif
    topo_free,
#if defined(TOPO_NO_GRAPH)
    NULL,
    NULL,
    NULL
#else
    topo_order,
    topo_list,
    topo_describe
#endif
};
/* clang-format on */
#define TOPO_OPS_PTR (&topo_ops.head)
#endif

NCCOM_PLUGIN_EXPORT const nccom_plugin_descriptor_t nccom_plugin = {
    NCCOM_PLUGIN_ABI_VERSION,
    sizeof(nccom_plugin_descriptor_t),
    NCCOM_PLUGIN_KIND_TOPOLOGY,
    0,
    "topo_test",
    "1.0",
    NCCOM_CAP_TOPO_SYSTEM | NCCOM_CAP_TOPO_GRAPH,
    TOPO_OPS_PTR,
    NULL /* knobs */};
