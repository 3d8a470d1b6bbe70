/*
 * nccom/topo_plugin.h — the vtable of a topology plugin
 * (nccom_plugin_descriptor_t.kind == NCCOM_PLUGIN_KIND_TOPOLOGY).
 *
 * A topology backend answers two questions for one node of a communicator:
 *   1. What does this node look like? — NCCL topology XML (<system>…), the
 *      schema of upstream NCCL's NCCL_TOPO_FILE.
 *   2. Optionally: which rings should the channels follow? — NCCL graph XML
 *      (<graphs><graph><channel>…), the schema of NCCL_GRAPH_FILE.
 * Text crosses the boundary, not structs: the formats are the public ones,
 * already versioned, readable in a dump, and the host validates them like
 * any other untrusted input. Plugins built in tree: topo_neuron (Trn1, Inf2,
 * Trn2, Trn3 and the emulated platform; the NEW priority search) and
 * topo_nccl (NCCL_TOPO_FILE, host detection, the inherited OLD search).
 *
 * Every text a plugin returns is allocated by the plugin and released by the
 * host through free_text. Error text goes to the caller's buffer (always
 * NUL-terminated when err_len > 0) so the host can say what failed where.
 *
 * Pure C99; usable from C++.
 */
#ifndef NCCOM_TOPO_PLUGIN_H
#define NCCOM_TOPO_PLUGIN_H

#include "nccom/plugin.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NCCOM_TOPO_OPS_VERSION 1u

/* Capability bits of a topology plugin's descriptor. */
#define NCCOM_CAP_TOPO_SYSTEM ((uint64_t)1 << 0) /* get_system_xml answers */
#define NCCOM_CAP_TOPO_GRAPH ((uint64_t)1 << 1)  /* compute_graph answers */

/* The machine as the runtime describes it (nrt_get_instance_info and the
 * nec_* device callbacks). Identical on every rank of a node. */
typedef struct nccom_topo_machine {
  uint32_t struct_size;
  uint32_t instance_family; /* nrt_instance_info_t.family */
  uint32_t instance_size;   /* nrt_instance_info_t.size */
  char arch_name[16];       /* NUL-terminated */
  char device_revision[8];  /* generation tag, NUL-terminated */
  int32_t device_count;     /* Neuron devices on this node (nec_get_device_count) */
  int32_t vcore_size;       /* NeuronCores per logical core (nec_get_virtual_core_size) */
  int32_t pod_type;         /* 0 = none, 1 = P2P, 2 = SWITCH (nccom's own numbering) */
  int32_t pod_size;         /* nodes per UltraServer pod; 1 when there is no pod */
  int32_t reserved;         /* zero; keeps the struct a multiple of 8 bytes */
} nccom_topo_machine_t;

/* This node's share of the communicator. */
typedef struct nccom_topo_node {
  uint32_t struct_size;
  int32_t n_ranks; /* ranks in the communicator */
  int32_t n_nodes; /* distinct hosts in the communicator */
  int32_t node;    /* this node's index, 0 .. n_nodes-1 */
  int32_t n_local; /* ranks on this node */
  int32_t reserved;
  const int32_t* local_ranks;   /* n_local global ranks, ascending */
  const int32_t* local_devices; /* the Neuron device of each local rank */
  const int32_t* local_cores;   /* the logical core of each local rank within its device */
} nccom_topo_node_t;

/* What the host wants searched: the RING template of the original's
 * buildGraphTransportsRank. */
typedef struct nccom_topo_graph_request {
  uint32_t struct_size;
  int32_t pattern;   /* 4 = RING (the only one built) */
  int32_t cross_nic; /* 0, 1 or 2 = auto */
  int32_t min_channels;
  int32_t max_channels;
  int32_t new_algorithm; /* NCCL_GRAPH_USE_NEW_ALGORITHM: -1 unset, 0 off, 1 on */
} nccom_topo_graph_request_t;

typedef struct nccom_topo_ops {
  nccom_plugin_ops_t head; /* head.struct_size == sizeof(nccom_topo_ops_t) */
  uint32_t ops_version;    /* NCCOM_TOPO_OPS_VERSION */
  uint32_t reserved;

  /* Mandatory. NCCOM_PLUGIN_OK if this backend describes `machine`,
   * NCCOM_PLUGIN_UNSUPPORTED (with the reason in `why`) otherwise. */
  nccom_plugin_status_t (*probe)(void* ctx, const nccom_topo_machine_t* machine, char* why,
                                 size_t why_len);

  /* Mandatory. This node's topology as NCCL topology XML. */
  nccom_plugin_status_t (*get_system_xml)(void* ctx, const nccom_topo_machine_t* machine,
                                          const nccom_topo_node_t* node, char** xml_out, char* err,
                                          size_t err_len);

  /* Optional. The RING graph over `system_xml` (the host's possibly trimmed
   * copy) as NCCL graph XML. NCCOM_PLUGIN_UNSUPPORTED means "not mine to
   * search for this request" and the host asks the next backend. */
  nccom_plugin_status_t (*compute_graph)(void* ctx, const nccom_topo_machine_t* machine,
                                         const nccom_topo_node_t* node, const char* system_xml,
                                         const nccom_topo_graph_request_t* request,
                                         char** graph_xml_out, char* err, size_t err_len);

  /* Mandatory. Releases a text returned by this plugin. */
  void (*free_text)(void* ctx, char* text);

  /* Optional. The ring order over the communicator's nodes (the UltraServer
   * pod branch of ncclTopoPostset): pod_node_ids[n] is node n's pod node id;
   * write a permutation of 0..n_nodes-1 to order_out. UNSUPPORTED (or a
   * NULL slot) keeps the nodes in index order. */
  nccom_plugin_status_t (*order_nodes)(void* ctx, const nccom_topo_machine_t* machine,
                                       int32_t n_nodes, const int32_t* pod_node_ids,
                                       int32_t* order_out, char* err, size_t err_len);

  /* The two slots below describe machines for tools that have no runtime to
   * ask (nccom-topo simulates a cluster of a named platform). A host reads
   * them only when head.struct_size covers them; NULL or UNSUPPORTED means
   * "this backend names no platforms". Both answer XML text released with
   * free_text; every number is a decimal integer, every list is
   * comma-separated.
   *
   * Optional. The platforms this backend describes, with the machine a
   * runtime reports for each (the fields of nccom_topo_machine_t) and the
   * device counts and logical-core sizes it accepts:
   *   <platforms>
   *     <platform name="trn2" codename="CAYMAN" generation="v3"
   *               instance_family="5" instance_size="9" arch_name="trn2"
   *               device_revision="v3" pod_type="0" pod_size="1"
   *               devices="1,16" default_devices="16"
   *               lnc="1,2" default_lnc="2"/>
   *   </platforms> */
  nccom_plugin_status_t (*list_platforms)(void* ctx, char** xml_out, char* err, size_t err_len);

  /* Optional. The node `machine` describes, as this backend models it
   * (INVALID_ARGUMENT, with the rule in `err`, for a device count or
   * logical-core size the platform does not have):
   *   <node platform="trn2" devices="16" cores_per_device="8" lnc="2"
   *         vcores_per_device="4">
   *     <device id="0" mla="0" numa="0" pci_switch="0" vcores="0,1,2,3"/>
   *     <nic id="0" numa="0" pci_switch="0" devices="0"/>
   *     <link a="0" b="1" locality="..."/>
   *   </node>
   * The host does not interpret locality; it is the backend's own word. */
  nccom_plugin_status_t (*describe_node)(void* ctx, const nccom_topo_machine_t* machine,
                                         char** xml_out, char* err, size_t err_len);
} nccom_topo_ops_t;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* NCCOM_TOPO_PLUGIN_H */
