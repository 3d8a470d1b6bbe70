/*
 * nccom/net_handle.h — what nccom's libnccom hands out from
 * neuronGetOFIHandle, and how a runtime tells which plugin is behind it.
 *
 * neuronGetOFIHandle answers with a Neuron ncclNet_v6 table (net_v6.h) that
 * the runtime calls with v6 slot offsets:
 *  - when the selected plugin is a native Neuron v6 plugin, its own table
 *    (the "ncclNetPlugin_v6" symbol of its file), as the original does;
 *  - for any other plugin (Neuron v5 or v4, NVIDIA layout), libnccom's own
 *    v6 table over it: the first member of an nccom_adapted_net_t. Its slots
 *    have v6 semantics (connect/accept never block the caller), its name is
 *    the plugin's name, slots the plugin lacks are NULL, init and fini do
 *    nothing (libnccom owns the plugin's life).
 *
 * A runtime that wants to know which plugin libnccom selected: dladdr() the
 * table. If it lies in libnccom's own file and starts an
 * nccom_adapted_net_t (magic NCCOM_ADAPTED_NET_MAGIC), read the fields
 * below; otherwise the table is the plugin's own, its file is dladdr's
 * answer and its layout "Neuron ncclNet_v6". The strings live until
 * neuronFiniPlugin or the unload of libnccom.
 * Pure C99; usable from C++.
 */
#ifndef NCCOM_NET_HANDLE_H
#define NCCOM_NET_HANDLE_H

#include <nccom/net_v6.h>

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NCCOM_ADAPTED_NET_MAGIC "nccomNet" /* 8 bytes, no NUL stored */

typedef struct nccom_adapted_net {
  ncclNet_v6_t net;     /* what the runtime calls */
  char magic[8];        /* NCCOM_ADAPTED_NET_MAGIC */
  uint32_t struct_size; /* sizeof(nccom_adapted_net_t) of the writer */
  uint32_t version;     /* the plugin's own ABI version: 4, 5 or 6 */
  const char* layout;   /* "Neuron" or "NVIDIA" */
  const char* file;     /* the file holding the plugin's table, or "" */
} nccom_adapted_net_t;

#ifdef __cplusplus
}
#endif

#endif /* NCCOM_NET_HANDLE_H */
