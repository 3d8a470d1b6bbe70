/*
 * nccom/nrt_abi.h — every type that crosses the libnrt ⇄ libnccom boundary.
 *
 * One header for the host (libnccom), the reference runtime (emu/libnrt) and
 * the tests. Layouts are those of aws-neuronx-collectives 2.31.24: x86-64
 * System V, LP64. Every struct carries static asserts on its size and on each
 * known offset, so a wrong edit fails to build.
 *
 * Pure C (C11 or later) and C++; no dependencies beyond the C library.
 */
#ifndef NCCOM_NRT_ABI_H
#define NCCOM_NRT_ABI_H

#include <nccom/nccl_ptr.h>

#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#ifndef __cplusplus
#include <assert.h>
#include <stdbool.h>
#endif

#if defined(__cplusplus)
#define NCCOM_ABI_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define NCCOM_ABI_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif
#define NCCOM_ABI_SIZE(type, n) NCCOM_ABI_ASSERT(sizeof(type) == (n), #type " must be " #n " bytes")
#define NCCOM_ABI_OFFSET(type, field, n) \
  NCCOM_ABI_ASSERT(offsetof(type, field) == (n), #type "." #field " must be at offset " #n)

#ifdef __cplusplus
extern "C" {
#endif

NCCOM_ABI_ASSERT(sizeof(void*) == 8 && sizeof(long) == 8 && sizeof(int) == 4,
                 "the Neuron boundary is defined for LP64 only");

/* ---- Versions ------------------------------------------------------------ */

#define NCCOM_COMPATIBILITY_ID 89u  /* forward gate: libnrt requires exactly this */
#define NCCOM_VERSION_INFO_SIZE 56u /* size libnrt passes to neuronGetVersionInfo */
#define NCCOM_EXPORT_COUNT 37       /* neuron* entry points */
#define NCCOM_IMPORT_COUNT 20       /* nec_* + nrt_* callbacks, all @NRT_2.0.0 */

/* ---- NRT_STATUS: the return type of the exports -------------------------- */

typedef enum {
  NRT_SUCCESS = 0,
  NRT_FAILURE = 1,
  NRT_INVALID = 2,
  NRT_INVALID_HANDLE = 3,
  NRT_RESOURCE = 4,
  NRT_TIMEOUT = 5,
  NRT_HW_ERROR = 6,
  NRT_QUEUE_FULL = 7,
  NRT_LOAD_NOT_ENOUGH_NC = 9,
  NRT_UNSUPPORTED_NEFF_VERSION = 10,
  NRT_FAIL_HOST_MEM_ALLOC = 11,
  NRT_UNINITIALIZED = 13,
  NRT_CLOSED = 14,
  NRT_QUEUE_EMPTY = 15,
  NRT_EXEC_UNIT_UNRECOVERABLE = 101,
  NRT_EXEC_BAD_INPUT = 1002,
  NRT_EXEC_COMPLETED_WITH_NUM_ERR = 1003,
  NRT_EXEC_COMPLETED_WITH_ERR = 1004,
  NRT_EXEC_NC_BUSY = 1005,
  NRT_EXEC_OOB = 1006,
  NRT_COLL_PENDING = 1100,
  NRT_EXEC_HW_ERR_COLLECTIVES = 1200,
  NRT_EXEC_HW_ERR_HBM_UE = 1201,
  NRT_EXEC_HW_ERR_NC_UE = 1202,
  NRT_EXEC_HW_ERR_DMA_ABORT = 1203,
  NRT_EXEC_SW_NQ_OVERFLOW = 1204,
  NRT_EXEC_HW_ERR_REPAIRABLE_HBM_UE = 1205,
  NRT_NETWORK_PROXY_FAILURE = 1206
} NRT_STATUS;
NCCOM_ABI_SIZE(NRT_STATUS, 4);

typedef uint64_t dma_addr_t;

/* ---- nec_version_info_t — 56 bytes + open tail --------------------------- */

typedef struct nec_version_info {
  uint64_t major;
  uint64_t minor;
  uint64_t patch;
  uint64_t maintenance;
  char git_hash[16];              /* NUL-terminated short hash of the build */
  uint64_t compatibility_version; /* 89 */
  /* future fields may only be appended after offset 56 */
} nec_version_info_t;
NCCOM_ABI_SIZE(nec_version_info_t, 56);
NCCOM_ABI_OFFSET(nec_version_info_t, maintenance, 24);
NCCOM_ABI_OFFSET(nec_version_info_t, git_hash, 32);
NCCOM_ABI_OFFSET(nec_version_info_t, compatibility_version, 48);

/* ---- nrt_version_t — 224 bytes ------------------------------------------- */

typedef struct nrt_version {
  uint64_t rt_major;
  uint64_t rt_minor;
  uint64_t rt_patch;
  uint64_t rt_maintenance;
  char rt_detail[128];
  char git_hash[64];
} nrt_version_t;
NCCOM_ABI_SIZE(nrt_version_t, 224);
NCCOM_ABI_OFFSET(nrt_version_t, rt_detail, 32);
NCCOM_ABI_OFFSET(nrt_version_t, git_hash, 160);

/* ---- nrt_instance_info_t — 32 bytes -------------------------------------- */

typedef struct nrt_instance_info {
  uint32_t family;
  uint32_t size;
  char arch_name[16];
  char device_revision[8];
} nrt_instance_info_t;
NCCOM_ABI_SIZE(nrt_instance_info_t, 32);
NCCOM_ABI_OFFSET(nrt_instance_info_t, arch_name, 8);
NCCOM_ABI_OFFSET(nrt_instance_info_t, device_revision, 24);

/* ---- Small enums ---------------------------------------------------------- */
/* Where one of these crosses the boundary (an export's argument, a field the
 * other side fills in), it is declared as the 32-bit integer it is on the
 * wire: the receiving side checks the number before treating it as the enum,
 * so a caller's garbage is an error rather than a load of an invalid enum
 * value (undefined behaviour in C++). The sizes below keep them one ABI. */

typedef enum {
  NEC_POD_TYPE_NONE = 0,
  NEC_POD_TYPE_P2P = 1,
  NEC_POD_TYPE_SWITCH = 2,
  NEC_POD_TYPE_INVALID = 3
} nec_pod_type_t;
NCCOM_ABI_SIZE(nec_pod_type_t, 4);

typedef enum { ENC_PATTERN_RING = 0, ENC_PATTERN_MESH = 1, ENC_PATTERN_INVALID = 2 } enc_pattern_t;
NCCOM_ABI_SIZE(enc_pattern_t, 4);

typedef enum {
  ENC_CONNECTIVITY_MESH = 0,
  ENC_CONNECTIVITY_RDH = 1,
  ENC_CONNECTIVITY_DEFAULT = 2
} enc_net_connectivity_t;
NCCOM_ABI_SIZE(enc_net_connectivity_t, 4);

typedef enum {
  NET_SEND_COMM = 0,
  NET_RECV_COMM = 1,
  NET_RECV_LISTEN_COMM = 2,
  LOCAL_RECV_COMM = 3,
  LOCAL_SEND_COMM = 4
} ofi_comm_type_t;
NCCOM_ABI_SIZE(ofi_comm_type_t, 4);

/* Memory type bits of regMr (Neuron net headers): nccom/nccl_ptr.h. */
NCCOM_ABI_SIZE(nccl_ptr_type, 4);

typedef enum { NET_TRANSFER = 0, NET_OP_COMPLETE = 1, EXEC_COMPLETE = 2 } net_addr_mark_t;
NCCOM_ABI_SIZE(net_addr_mark_t, 4);

/* ---- enc_neuron_device_info_t — 216 bytes -------------------------------- */

#define ENC_PROXY_HISTOGRAM_OUTPUT_PATH_LENGTH_MAX 128

typedef struct enc_proxy_histogram_config {
  bool enable;
  size_t bucket_usecs;
  size_t num_buckets;
  size_t per_neff_warmup;
  size_t warmup;
  char output_path[ENC_PROXY_HISTOGRAM_OUTPUT_PATH_LENGTH_MAX];
} enc_proxy_histogram_config_t;
NCCOM_ABI_SIZE(enc_proxy_histogram_config_t, 168);
NCCOM_ABI_OFFSET(enc_proxy_histogram_config_t, bucket_usecs, 8);
NCCOM_ABI_OFFSET(enc_proxy_histogram_config_t, num_buckets, 16);
NCCOM_ABI_OFFSET(enc_proxy_histogram_config_t, per_neff_warmup, 24);
NCCOM_ABI_OFFSET(enc_proxy_histogram_config_t, warmup, 32);
NCCOM_ABI_OFFSET(enc_proxy_histogram_config_t, output_path, 40);

typedef struct enc_neuron_device_info {
  int nec_dev_id; /* runtime device to select */
  int mla_idx;    /* copied into the 112-byte peer record */
  int tpb_idx;
  int host_device_id; /* copied into the peer record */
  int routing_id;
  uint64_t pod_id;
  uint32_t pod_type; /* a nec_pod_type_t value */
  uint32_t pod_node_id;
  uint32_t virtual_server_id; /* mixed into the peer host hash */
  enc_proxy_histogram_config_t histogram_config;
} enc_neuron_device_info_t;
NCCOM_ABI_SIZE(enc_neuron_device_info_t, 216);
NCCOM_ABI_OFFSET(enc_neuron_device_info_t, nec_dev_id, 0);
NCCOM_ABI_OFFSET(enc_neuron_device_info_t, mla_idx, 4);
NCCOM_ABI_OFFSET(enc_neuron_device_info_t, tpb_idx, 8);
NCCOM_ABI_OFFSET(enc_neuron_device_info_t, host_device_id, 12);
NCCOM_ABI_OFFSET(enc_neuron_device_info_t, routing_id, 16);
NCCOM_ABI_OFFSET(enc_neuron_device_info_t, pod_id, 24);
NCCOM_ABI_OFFSET(enc_neuron_device_info_t, pod_type, 32);
NCCOM_ABI_OFFSET(enc_neuron_device_info_t, pod_node_id, 36);
NCCOM_ABI_OFFSET(enc_neuron_device_info_t, virtual_server_id, 40);
NCCOM_ABI_OFFSET(enc_neuron_device_info_t, histogram_config, 48);

/* ---- nccl_comm_info_t — 1376 bytes --------------------------------------- */

#define NEC_MAX_CHANNELS 32

typedef struct enc_ring {
  int prev;
  int next;
  int* user_ranks;
  bool duplicate;
} enc_ring_t;
NCCOM_ABI_SIZE(enc_ring_t, 24);
NCCOM_ABI_OFFSET(enc_ring_t, user_ranks, 8);
NCCOM_ABI_OFFSET(enc_ring_t, duplicate, 16);

typedef struct enc_peer_info {
  int neuron_dev;
  int rid;
  int tpb_index;
  int pod_node_id;
} enc_peer_info_t;
NCCOM_ABI_SIZE(enc_peer_info_t, 16);

/* Public-header variant B (local_rack_rank_n, use_net); see docs/decisions.md. */
typedef struct nccl_comm_info {
  uint64_t cluster_id;
  time_t epoch;
  int neuron_dev;
  int rank;
  int rank_n;
  int local_rank_n;
  int local_rack_rank_n;
  int node;
  int node_n;
  bool enable_pod;
  bool use_net;
  int pod;
  int pod_n;
  int pod_node;
  int pod_node_n;
  enc_peer_info_t* peers; /* caller-allocated, rank_n entries, or NULL */
  int channel_n;
  enc_ring_t rings[NEC_MAX_CHANNELS];
  int kangaring_channel_n;
  int* kangaring_paths[NEC_MAX_CHANNELS];
  int mla_cycle_n;
  int* mla_cycles[NEC_MAX_CHANNELS];
} nccl_comm_info_t;
NCCOM_ABI_SIZE(nccl_comm_info_t, 1376);
NCCOM_ABI_OFFSET(nccl_comm_info_t, epoch, 8);
NCCOM_ABI_OFFSET(nccl_comm_info_t, neuron_dev, 16);
NCCOM_ABI_OFFSET(nccl_comm_info_t, rank, 20);
NCCOM_ABI_OFFSET(nccl_comm_info_t, rank_n, 24);
NCCOM_ABI_OFFSET(nccl_comm_info_t, local_rank_n, 28);
NCCOM_ABI_OFFSET(nccl_comm_info_t, local_rack_rank_n, 32);
NCCOM_ABI_OFFSET(nccl_comm_info_t, node, 36);
NCCOM_ABI_OFFSET(nccl_comm_info_t, node_n, 40);
NCCOM_ABI_OFFSET(nccl_comm_info_t, enable_pod, 44);
NCCOM_ABI_OFFSET(nccl_comm_info_t, use_net, 45);
NCCOM_ABI_OFFSET(nccl_comm_info_t, pod, 48);
NCCOM_ABI_OFFSET(nccl_comm_info_t, pod_n, 52);
NCCOM_ABI_OFFSET(nccl_comm_info_t, pod_node, 56);
NCCOM_ABI_OFFSET(nccl_comm_info_t, pod_node_n, 60);
NCCOM_ABI_OFFSET(nccl_comm_info_t, peers, 64);
NCCOM_ABI_OFFSET(nccl_comm_info_t, channel_n, 72);
NCCOM_ABI_OFFSET(nccl_comm_info_t, rings, 80);
NCCOM_ABI_OFFSET(nccl_comm_info_t, kangaring_channel_n, 848);
NCCOM_ABI_OFFSET(nccl_comm_info_t, kangaring_paths, 856);
NCCOM_ABI_OFFSET(nccl_comm_info_t, mla_cycle_n, 1112);
NCCOM_ABI_OFFSET(nccl_comm_info_t, mla_cycles, 1120);

/* ---- The three proxy FIFO records ---------------------------------------- */

typedef struct net_ops_info {
  uint16_t sema_shift_offset;
  bool early_send_completion;
  bool early_recv_posting;
  volatile uint32_t* inc_send_handshake;
  volatile uint32_t* inc_send_complete;
  volatile uint32_t* inc_recv_handshake;
  volatile uint32_t* inc_recv_complete;
  uint32_t tx_entry_cnt;
  uint32_t rx_entry_cnt;
  uint32_t net_idx_loop_size;
  uint32_t initial_send_credits;
  uint32_t ending_recv_credits;
  size_t data_type_sz;
  bool is_dynamic_send_recv_sz;
  bool variable_peer;
  bool add_to_histogram;
  uint32_t basic_block_id;
  uint32_t func_rel_op_idx;
  uint32_t unrolled_count;
  void* enc_channel;
} net_ops_info_t;
NCCOM_ABI_SIZE(net_ops_info_t, 96);
NCCOM_ABI_OFFSET(net_ops_info_t, early_send_completion, 2);
NCCOM_ABI_OFFSET(net_ops_info_t, early_recv_posting, 3);
NCCOM_ABI_OFFSET(net_ops_info_t, inc_send_handshake, 8);
NCCOM_ABI_OFFSET(net_ops_info_t, inc_send_complete, 16);
NCCOM_ABI_OFFSET(net_ops_info_t, inc_recv_handshake, 24);
NCCOM_ABI_OFFSET(net_ops_info_t, inc_recv_complete, 32);
NCCOM_ABI_OFFSET(net_ops_info_t, tx_entry_cnt, 40);
NCCOM_ABI_OFFSET(net_ops_info_t, rx_entry_cnt, 44);
NCCOM_ABI_OFFSET(net_ops_info_t, net_idx_loop_size, 48);
NCCOM_ABI_OFFSET(net_ops_info_t, initial_send_credits, 52);
NCCOM_ABI_OFFSET(net_ops_info_t, ending_recv_credits, 56);
NCCOM_ABI_OFFSET(net_ops_info_t, data_type_sz, 64);
NCCOM_ABI_OFFSET(net_ops_info_t, is_dynamic_send_recv_sz, 72);
NCCOM_ABI_OFFSET(net_ops_info_t, variable_peer, 73);
NCCOM_ABI_OFFSET(net_ops_info_t, add_to_histogram, 74);
NCCOM_ABI_OFFSET(net_ops_info_t, basic_block_id, 76);
NCCOM_ABI_OFFSET(net_ops_info_t, func_rel_op_idx, 80);
NCCOM_ABI_OFFSET(net_ops_info_t, unrolled_count, 84);
NCCOM_ABI_OFFSET(net_ops_info_t, enc_channel, 88);

typedef struct net_src_addr {
  uint32_t net_op_idx;
  int complete;
  dma_addr_t dev_addr;
  void* host_addr;
  void* nccl_mhandle;
  uint32_t size;
  uint32_t mark; /* a net_addr_mark_t value */
  void* proxy_histogram_tag;
  int dst_rank;
  void* dst_addr;
  void* dst_mhandle;
} net_src_addr_t;
NCCOM_ABI_SIZE(net_src_addr_t, 72);
NCCOM_ABI_OFFSET(net_src_addr_t, complete, 4);
NCCOM_ABI_OFFSET(net_src_addr_t, dev_addr, 8);
NCCOM_ABI_OFFSET(net_src_addr_t, host_addr, 16);
NCCOM_ABI_OFFSET(net_src_addr_t, nccl_mhandle, 24);
NCCOM_ABI_OFFSET(net_src_addr_t, size, 32);
NCCOM_ABI_OFFSET(net_src_addr_t, mark, 36);
NCCOM_ABI_OFFSET(net_src_addr_t, proxy_histogram_tag, 40);
NCCOM_ABI_OFFSET(net_src_addr_t, dst_rank, 48);
NCCOM_ABI_OFFSET(net_src_addr_t, dst_addr, 56);
NCCOM_ABI_OFFSET(net_src_addr_t, dst_mhandle, 64);

typedef struct net_dest_addr {
  uint32_t net_op_idx;
  int complete;
  dma_addr_t dev_addr;
  void* host_addr;
  void* nccl_mhandle;
  uint32_t size;
  uint32_t mark; /* a net_addr_mark_t value */
  int src_rank;
} net_dest_addr_t;
NCCOM_ABI_SIZE(net_dest_addr_t, 48);
NCCOM_ABI_OFFSET(net_dest_addr_t, complete, 4);
NCCOM_ABI_OFFSET(net_dest_addr_t, dev_addr, 8);
NCCOM_ABI_OFFSET(net_dest_addr_t, host_addr, 16);
NCCOM_ABI_OFFSET(net_dest_addr_t, nccl_mhandle, 24);
NCCOM_ABI_OFFSET(net_dest_addr_t, size, 32);
NCCOM_ABI_OFFSET(net_dest_addr_t, mark, 36);
NCCOM_ABI_OFFSET(net_dest_addr_t, src_rank, 40);

/* ---- enc_host_mem_t — 32 bytes ------------------------------------------- */

typedef struct enc_host_mem {
  void* mem_handle;
  void* va;
  dma_addr_t pa;
  size_t size;
} enc_host_mem_t;
NCCOM_ABI_SIZE(enc_host_mem_t, 32);
NCCOM_ABI_OFFSET(enc_host_mem_t, va, 8);
NCCOM_ABI_OFFSET(enc_host_mem_t, pa, 16);
NCCOM_ABI_OFFSET(enc_host_mem_t, size, 24);

/* ---- Runtime-owned channel objects the proxy reads -----------------------
 * Layouts from a public nec.h; the 2.31.24 ones are not published.
 * libnccom reads only these prefixes, through net_ops_info_t.enc_channel. */

#define NEC_MAX_FOLD_N 8
#define NEC_CACHE_LINE_SIZE 128

/* One device<->proxy index word, alone on its cache line. */
typedef struct enc_net_host_index {
  volatile uint32_t index;
  uint8_t pad[NEC_CACHE_LINE_SIZE - sizeof(uint32_t)];
} enc_net_host_index_t;
NCCOM_ABI_SIZE(enc_net_host_index_t, 128);

/* The host memory behind enc_net_connector.net_host_mem: one index word per
 * fold, for posted receives or posted sends. */
typedef union enc_net_host_memory {
  enc_net_host_index_t post_recv[NEC_MAX_FOLD_N];
  enc_net_host_index_t post_send[NEC_MAX_FOLD_N];
} enc_net_host_memory_t;
NCCOM_ABI_SIZE(enc_net_host_memory_t, 1024);

typedef struct enc_host_mem_shared {
  enc_host_mem_t mem;
  int refcnt;
} enc_host_mem_shared_t;
NCCOM_ABI_SIZE(enc_host_mem_shared_t, 40);

typedef struct enc_net_connector {
  int fold_n;
  enc_host_mem_t net_host_mem;                   /* va -> enc_net_host_memory_t */
  enc_host_mem_shared_t* dynamic_input_host_mem; /* passed to the dynamic-size callbacks */
  void* devmem_res;
  void* nccl_mhandle;
  void* inc_recv_sem_nccl_mhandle;
  uint32_t* inc_recv_sem_values_buffer;
  void* inc_recv_sem_values_buffer_mhandle;
  void* nccl_connector; /* from neuronGetNetConnector */
} enc_net_connector_t;
NCCOM_ABI_SIZE(enc_net_connector_t, 96);
NCCOM_ABI_OFFSET(enc_net_connector_t, net_host_mem, 8);
NCCOM_ABI_OFFSET(enc_net_connector_t, dynamic_input_host_mem, 40);
NCCOM_ABI_OFFSET(enc_net_connector_t, inc_recv_sem_values_buffer, 72);
NCCOM_ABI_OFFSET(enc_net_connector_t, nccl_connector, 88);

/* The prefix of libnrt's struct enc_channel that libnccom reads; the
 * runtime's object continues (device memory, gateway buffers, ...). */
typedef struct enc_channel_prefix {
  int id;
  uint32_t pattern; /* an enc_pattern_t value */
  enc_net_connector_t* net_recv;
  enc_net_connector_t* net_send;
} enc_channel_prefix_t;
NCCOM_ABI_SIZE(enc_channel_prefix_t, 24);
NCCOM_ABI_OFFSET(enc_channel_prefix_t, pattern, 4);
NCCOM_ABI_OFFSET(enc_channel_prefix_t, net_recv, 8);
NCCOM_ABI_OFFSET(enc_channel_prefix_t, net_send, 16);

/* ---- ncclUniqueId — 128 bytes, opaque to libnrt -------------------------- */

#define NCCL_UNIQUE_ID_BYTES 128
typedef struct ncclUniqueId {
  char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;
NCCOM_ABI_SIZE(ncclUniqueId, 128);

/* ---- cpu_set_t for neuronSetAffinity ------------------------------------- */
/* glibc only defines cpu_set_t under _GNU_SOURCE (always on in g++). C users
 * who do not define it get an opaque type of the same pointer ABI. */
#if defined(__USE_GNU)
typedef cpu_set_t nccom_cpu_set_t;
#else
typedef struct nccom_opaque_cpu_set nccom_cpu_set_t;
#endif

/* ---- FORWARD: the 37 neuron* exports of libnccom ------------------------- */
/* Listed in table-slot order. All return NRT_STATUS; 0 is success.          */

/* X() entries in table-slot order, laid out by hand */
/* clang-format off */
#define NCCOM_FOR_EACH_EXPORT(X)                                             \
  X(neuronGetVersionInfo) X(neuronGetUniqueId) X(neuronInitGlobalComm)       \
  X(neuronInitComm) X(neuronBuildGraphComm) X(neuronGetCommInfo)             \
  X(neuronFreeComm) X(neuronExpandConnectivity) X(neuronStartNetworkProxy)   \
  X(neuronStopNetworkProxy) X(neuronNetworkProxyProgress)                    \
  X(neuronBootstrapSend) X(neuronBootstrapRecv) X(neuronBootstrapAllGather)  \
  X(neuronPreferredNcRidNic) X(neuronPreferredNcRidNicBdf) X(neuronNetRegMr) \
  X(neuronNetDeregMr) X(neuronGetPeerDeviceId) X(neuronSetAffinity)          \
  X(neuronGetNetConnector) X(neuronInitNet) X(neuronFiniPlugin)              \
  X(neuronGetOFIHandle) X(neuronNetListen) X(neuronNetConnect)               \
  X(neuronNetAccept) X(neuronNetRegMrOG) X(neuronNetDeregMrOG)               \
  X(neuronNetGetMrKey) X(neuronNetIsend) X(neuronNetIrecv) X(neuronNetIflush)\
  X(neuronNetTest) X(neuronNetCloseSend) X(neuronNetCloseRecv)               \
  X(neuronNetCloseListen)
/* clang-format on */

NRT_STATUS neuronGetVersionInfo(nec_version_info_t* out, size_t n);
NRT_STATUS neuronGetUniqueId(char* id_out, int rank_n, const char* hint);
NRT_STATUS neuronInitGlobalComm(int g_dev_id, int g_dev_count, const enc_neuron_device_info_t* dev,
                                const char* root_comm_id, void** comm_out, const char* hint);
NRT_STATUS neuronInitComm(void** comm_out, int rank_n, char* id, int rank,
                          const enc_neuron_device_info_t* dev, bool bypass_graph);
NRT_STATUS neuronBuildGraphComm(void* comm);
NRT_STATUS neuronGetCommInfo(void* comm, nccl_comm_info_t* out);
NRT_STATUS neuronFreeComm(void* comm);
NRT_STATUS neuronExpandConnectivity(void* comm, uint32_t conn /* enc_net_connectivity_t */);
NRT_STATUS neuronStartNetworkProxy(void* comm, uint32_t stream, uint32_t basic_block_id,
                                   net_ops_info_t* ops, int ops_n, net_src_addr_t* src, int src_n,
                                   net_dest_addr_t* dst, int dst_n);
NRT_STATUS neuronStopNetworkProxy(void* comm, uint32_t stream);
NRT_STATUS neuronNetworkProxyProgress(void* comm, uint32_t stream, uint32_t basic_block_id,
                                      bool* idle, bool* done);
NRT_STATUS neuronBootstrapSend(void* state, int peer, void* data, size_t size, const char* hint);
NRT_STATUS neuronBootstrapRecv(void* state, int peer, void* data, size_t size, const char* hint);
NRT_STATUS neuronBootstrapAllGather(void* state, void* all_data, size_t size_per_rank,
                                    const char* hint);
NRT_STATUS neuronPreferredNcRidNic(uint32_t a, uint32_t b, int* nic_out);
NRT_STATUS neuronPreferredNcRidNicBdf(uint32_t a, uint32_t b, char* bdf_out, size_t bdf_len);
NRT_STATUS neuronNetRegMr(void* comm, uint32_t pattern /* enc_pattern_t */, int channel,
                          bool is_send, uint32_t comm_type /* ofi_comm_type_t */, void* addr,
                          size_t size, int32_t type /* nccl_ptr_type */, void** mhandle_out);
NRT_STATUS neuronNetDeregMr(void* comm, uint32_t pattern /* enc_pattern_t */, int channel,
                            bool is_send, uint32_t comm_type /* ofi_comm_type_t */, void* mhandle);
NRT_STATUS neuronGetPeerDeviceId(void* comm, int peer, int* dev_out);
NRT_STATUS neuronSetAffinity(void* comm, nccom_cpu_set_t* override_mask, nccom_cpu_set_t* save,
                             int core);
NRT_STATUS neuronGetNetConnector(void* comm, uint32_t pattern /* enc_pattern_t */, int channel,
                                 bool is_send, void** connector_out);
NRT_STATUS neuronInitNet(char* root_comm_id);
NRT_STATUS neuronFiniPlugin(void);
NRT_STATUS neuronGetOFIHandle(void** out);
NRT_STATUS neuronNetListen(int dev, void* handle, void** listen_comm);
NRT_STATUS neuronNetConnect(int dev, void* handle, void** send_comm);
NRT_STATUS neuronNetAccept(void* listen_comm, void** recv_comm);
NRT_STATUS neuronNetRegMrOG(void* comm, void* data, size_t size, int type, void** mhandle);
NRT_STATUS neuronNetDeregMrOG(void* comm, void* mhandle);
NRT_STATUS neuronNetGetMrKey(void* mhandle, uint64_t* key_out);
NRT_STATUS neuronNetIsend(void* send_comm, void* data, int size, void* mhandle, void** request);
NRT_STATUS neuronNetIrecv(void* recv_comm, void* data, int size, void* mhandle, void** request);
NRT_STATUS neuronNetIflush(void* recv_comm, void* data, int size, void* mhandle, void** request);
NRT_STATUS neuronNetTest(void* request, int* done, int* size);
NRT_STATUS neuronNetCloseSend(void* send_comm);
NRT_STATUS neuronNetCloseRecv(void* recv_comm);
NRT_STATUS neuronNetCloseListen(void* listen_comm);

/* The runtime's table of the 37 entry points, in slot order. A loader fills it
 * all or leaves it all NULL, as libnrt's ncclInit does. */
typedef struct nccom_export_table {
#define NCCOM_TABLE_SLOT(name) __typeof__(&name) name;
  NCCOM_FOR_EACH_EXPORT(NCCOM_TABLE_SLOT)
#undef NCCOM_TABLE_SLOT
} nccom_export_table_t;
NCCOM_ABI_SIZE(nccom_export_table_t, NCCOM_EXPORT_COUNT * sizeof(void*));

/* ---- REVERSE: the 20 callbacks libnccom imports @NRT_2.0.0 --------------- */

/* X() entries in table-slot order, laid out by hand */
/* clang-format off */
#define NCCOM_FOR_EACH_IMPORT(X)                                               \
  X(nrt_get_total_vnc_count) X(nrt_get_instance_info) X(nrt_get_version)       \
  X(nrt_get_libnccl_net) X(nec_inc_semaphore) X(nec_get_device_count)          \
  X(nec_get_device_pci_bdf) X(nec_get_virtual_core_size)                       \
  X(nec_build_port_and_rid_map) X(nec_is_mla_available) X(nec_mla_idx_to_rid)  \
  X(nec_rid_to_mla_idx) X(nec_get_peer_mla_idx) X(nec_get_p2p_pod_peer_node)   \
  X(nec_pod_node_can_access_peer_node) X(nec_ndl_printk)                       \
  X(nec_get_dynamic_send_size_bytes) X(nec_get_dynamic_send_offset_bytes)      \
  X(nec_get_dynamic_recv_offset_bytes) X(nec_set_recv_size_bytes)
/* clang-format on */

NRT_STATUS nrt_get_total_vnc_count(uint32_t* count_out);
NRT_STATUS nrt_get_instance_info(nrt_instance_info_t* out, size_t out_len);
NRT_STATUS nrt_get_version(nrt_version_t* out, size_t out_len);
void* nrt_get_libnccl_net(int* err_out, char* err_msg, size_t err_msg_len);

void nec_inc_semaphore(volatile uint32_t* sem_inc_addr, uint32_t val);
int nec_get_device_count(int* available_mla_array, uint32_t array_size);
int nec_get_device_pci_bdf(int neuron_dev, uint32_t* domain, uint32_t* bus_num, uint8_t* pci_slot,
                           uint8_t* dev_func);
NRT_STATUS nec_get_virtual_core_size(uint32_t* virtual_core_size);
NRT_STATUS nec_build_port_and_rid_map(int local_nec_dev_id, int* mla_indexes, int* host_device_ids,
                                      int count);
bool nec_is_mla_available(int local_nec_dev_id, int mla_idx);
int nec_mla_idx_to_rid(int local_nec_dev_id, int mla_idx);
int nec_rid_to_mla_idx(int local_nec_dev_id, int rid);
int nec_get_peer_mla_idx(int local_nec_dev_id, int mla_idx, int port);
int nec_get_p2p_pod_peer_node(uint32_t nec_dev_id, int node, uint32_t port_distance,
                              int* peer_node);
NRT_STATUS nec_pod_node_can_access_peer_node(uint32_t pod_type /* nec_pod_type_t */,
                                             uint32_t local_rid, uint32_t local_node_id,
                                             uint32_t remote_rid, uint32_t remote_node_id,
                                             int* can_access_peer);
void nec_ndl_printk(char* str, uint32_t size, uint32_t action);
size_t nec_get_dynamic_send_size_bytes(enc_host_mem_t* dyn_input, size_t data_type_sz, int dst_rank,
                                       int rank_n);
size_t nec_get_dynamic_send_offset_bytes(enc_host_mem_t* dyn_input, size_t data_type_sz,
                                         int dst_rank, int rank_n);
size_t nec_get_dynamic_recv_offset_bytes(enc_host_mem_t* dyn_input, size_t data_type_sz,
                                         int src_rank, int rank_n);
void nec_set_recv_size_bytes(enc_host_mem_t* dyn_input, size_t recv_size_bytes, size_t data_type_sz,
                             int src_rank, int rank_n);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* NCCOM_NRT_ABI_H */
