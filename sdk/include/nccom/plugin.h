/*
 * nccom/plugin.h — the descriptor every nccom-native plugin exports.
 *
 * A plugin is a shared object that exports exactly one data symbol,
 * NCCOM_PLUGIN_SYMBOL ("nccom_plugin"), of type nccom_plugin_descriptor_t.
 * Everything else in the object should be hidden. The host reads the
 * descriptor's head (ABI version, struct size, kind) before anything else,
 * so those fields never move; new fields are only ever appended, and a host
 * reads an appended field only when struct_size says it is there.
 *
 * The vtable a descriptor points to starts with nccom_plugin_ops_t (again
 * size-first); each plugin kind appends its own slots after that head.
 * Slots documented as optional may be NULL: the host then substitutes a
 * function that reports "unsupported", so call sites never test for NULL.
 *
 * Plugins never print and never read the environment: the host hands them a
 * logger and their configuration through nccom_host_api_t at init.
 *
 * Pure C99; usable from C++.
 */
#ifndef NCCOM_PLUGIN_H
#define NCCOM_PLUGIN_H

#include "nccom/knob.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The descriptor ABI this header describes. A host supports exactly the
 * versions it was built for and rejects others with "got N, supports M". */
#define NCCOM_PLUGIN_ABI_VERSION 1u
#define NCCOM_PLUGIN_SYMBOL "nccom_plugin"

typedef enum {
  NCCOM_PLUGIN_KIND_NET = 1,       /* network: sockets, libfabric, ... */
  NCCOM_PLUGIN_KIND_TRANSPORT = 2, /* p2p, net_neuron */
  NCCOM_PLUGIN_KIND_TOPOLOGY = 3   /* topo_neuron, topo_nccl */
} nccom_plugin_kind_t;

typedef enum {
  NCCOM_PLUGIN_OK = 0,
  NCCOM_PLUGIN_ERROR = 1,       /* generic failure; details were logged */
  NCCOM_PLUGIN_UNSUPPORTED = 2, /* the operation is not provided by this plugin */
  NCCOM_PLUGIN_INVALID_ARGUMENT = 3,
  NCCOM_PLUGIN_SYSTEM_ERROR = 4 /* an OS or library call failed */
} nccom_plugin_status_t;

typedef enum {
  NCCOM_LOG_LEVEL_WARN = 2,
  NCCOM_LOG_LEVEL_INFO = 3,
  NCCOM_LOG_LEVEL_TRACE = 5
} nccom_log_level_t;

/* Logger the host hands to a plugin. `subsys` uses the NCCL_DEBUG_SUBSYS bits
 * (NCCL_INIT = 1, NCCL_NET = 16, ...). The message is printf-style. */
typedef void (*nccom_log_fn)(nccom_log_level_t level, unsigned long subsys, const char* file,
                             int line, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* What the host offers a plugin at init. Size-first: a plugin may read a
 * field only if struct_size covers it. */
typedef struct nccom_host_api {
  uint32_t struct_size;
  uint32_t abi_version; /* NCCOM_PLUGIN_ABI_VERSION of the host */
  nccom_log_fn log;
  /* The effective value of a setting as text, or NULL if there is none.
   * A key without a dot names one of the plugin's own knobs (nccom/knob.h);
   * a dotted key names a setting of the host, read-only
   * ("bootstrap.socket_ifname", "topology.file"). The pointer stays valid
   * until fini. */
  const char* (*config_get)(void* host_ctx, const char* key);
  void* host_ctx;
} nccom_host_api_t;

/* The common head of every kind's vtable. */
typedef struct nccom_plugin_ops {
  uint32_t struct_size; /* sizeof the whole kind-specific vtable */
  uint32_t reserved;
  /* Mandatory. Called once after loading; *plugin_ctx is passed back to fini. */
  nccom_plugin_status_t (*init)(const nccom_host_api_t* host, void** plugin_ctx);
  /* Optional (may be NULL): release everything init acquired. */
  void (*fini)(void* plugin_ctx);
} nccom_plugin_ops_t;

typedef struct nccom_plugin_descriptor {
  uint32_t abi_version; /* NCCOM_PLUGIN_ABI_VERSION the plugin was built with */
  uint32_t struct_size; /* sizeof(nccom_plugin_descriptor_t) at build time */
  uint32_t kind;        /* nccom_plugin_kind_t */
  uint32_t reserved;
  const char* name;              /* short unique name, e.g. "socket"; mandatory */
  const char* plugin_version;    /* free-form, e.g. "1.2.0"; mandatory */
  uint64_t capabilities;         /* kind-specific NCCOM_CAP_* bits */
  const nccom_plugin_ops_t* ops; /* kind-specific vtable; mandatory */
  /* Appended: read only when struct_size covers it. The plugin's own knobs
   * (nccom/knob.h), resolved by the host before init; NULL when none. */
  const nccom_knob_table_t* knobs;
} nccom_plugin_descriptor_t;

/* Helper for plugin authors:
 *   NCCOM_PLUGIN_EXPORT const nccom_plugin_descriptor_t nccom_plugin = {...}; */
#if defined(__GNUC__)
#define NCCOM_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define NCCOM_PLUGIN_EXPORT
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* NCCOM_PLUGIN_H */
