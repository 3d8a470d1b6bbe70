/*
 * nrt_emu.h — the application API of nccom's reference runtime (libnrt.so.1,
 * version node NRT_EMU_1.0).
 *
 * The reference runtime stands in for AWS's libnrt on machines without a
 * Neuron device: it provides the 20 callbacks libnccom imports @NRT_2.0.0
 * and loads libnccom exactly as libnrt does. These functions
 * are what tests and tools use to drive and inspect it. A real libnrt has
 * none of them.
 *
 * Environment (read when used, never at load time): NEURON_RT_EMU_PLATFORM,
 * NEURON_RT_EMU_DEVICES, NEURON_RT_EMU_TOTAL_VNC_COUNT,
 * NEURON_RT_VIRTUAL_CORE_SIZE, NEURON_RT_LOG_LEVEL — see docs/internals/emu.md
 * ("Environment").
 *
 * Pure C; usable from C++.
 */
#ifndef NRT_EMU_H
#define NRT_EMU_H

#include <nccom/nrt_abi.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NRT_EMU_PUBLIC __attribute__((visibility("default")))

/* Loads libnccom as libnrt's ncclInit does: dlopen("libnccom.so"), the
 * version gate (compat id 89), 37 dlsyms all-or-nothing, then the soft
 * dlopen("libnccom-net.so"). Runs once; later calls return the first outcome
 * (NRT_SUCCESS or NRT_FAILURE) until nrt_emu_unload_nccom(). Thread-safe. */
NRT_EMU_PUBLIC NRT_STATUS nrt_emu_load_nccom(void);

/* The 37 entry points in slot order, or NULL unless the load succeeded. */
NRT_EMU_PUBLIC const nccom_export_table_t* nrt_emu_nccom_table(void);

/* The file the loader opened (dladdr of a resolved symbol), or NULL. */
NRT_EMU_PUBLIC const char* nrt_emu_nccom_path(void);

/* What neuronGetVersionInfo reported — also after a rejected compat id — or
 * NULL if it was never called. */
NRT_EMU_PUBLIC const nec_version_info_t* nrt_emu_nccom_version(void);

/* The emulated platform as the runtime resolves NEURON_RT_EMU_PLATFORM
 * (read at each call; unset or empty: "emu"): a static string such as "emu",
 * "trn2" or "trn3-switch-v1", or NULL when the variable names no known
 * platform (one WARN line in the runtime log lists the known ones). */
NRT_EMU_PUBLIC const char* nrt_emu_platform_name(void);

/* The message a failed load recorded (libnrt's exact text), else NULL. */
NRT_EMU_PUBLIC const char* nrt_emu_last_error(void);

/* The guard of libnrt's per-call nccl* wrappers, for code that calls through the
 * table: if the load armed its sticky error, logs "NCCL init error: %s",
 * clears it and returns NRT_FAILURE (once); otherwise NRT_SUCCESS when
 * libnccom is loaded and NRT_UNINITIALIZED when it is not. */
NRT_EMU_PUBLIC NRT_STATUS nrt_emu_nccom_guard(void);

/* libnccom-net.so as opened by the loader (also what nrt_get_libnccl_net
 * hands libnccom), or NULL. When NULL, nrt_emu_net_error() says why (the
 * dlerror text) and nrt_emu_net_hint() whether libfabric is present. */
NRT_EMU_PUBLIC void* nrt_emu_net_handle(void);
NRT_EMU_PUBLIC const char* nrt_emu_net_error(void);
NRT_EMU_PUBLIC const char* nrt_emu_net_hint(void);

/* The pod type (NEC_POD_TYPE_*) nrt_emu_ccom_init gives every rank's device
 * (enc_neuron_device_info_t.pod_type, which libnccom's topology reads with
 * nrt_get_instance_info) on the platform NEURON_RT_EMU_PLATFORM names; -1
 * when it names none. */
NRT_EMU_PUBLIC int nrt_emu_platform_pod_type(void);
/* The device count (nec_get_device_count) a rank's runtime reports once
 * nrt_emu_ccom_init placed it on a host of local_n ranks:
 * NEURON_RT_EMU_DEVICES when set, else the platform's fixed count, else
 * local_n. -1 when the platform is unknown or NEURON_RT_EMU_DEVICES is
 * invalid (logged). */
NRT_EMU_PUBLIC int nrt_emu_host_device_count(int local_n);

/* The runtime's environment variables, by index from 0: 1 and the variable's
 * name, its values and its default (static strings), or 0 past the last. */
NRT_EMU_PUBLIC int nrt_emu_knob(int index, const char** name, const char** values,
                                const char** default_text);

/* Which net plugin libnccom selected, as libnccom itself reports it: the
 * table neuronGetOFIHandle hands out (the plugin's own Neuron v6 table, or
 * libnccom's adapter over it, sdk/include/nccom/net_handle.h), named through
 * dladdr. Selects the plugin if nothing did yet, as neuronGetOFIHandle does.
 * NRT_SUCCESS fills *out; the strings stay valid until the next call or the
 * unload. Otherwise the status of neuronGetOFIHandle (or NRT_UNINITIALIZED
 * before a load, NRT_INVALID for NULL) and out->error says why. */
typedef struct nrt_emu_net_plugin {
  size_t struct_size; /* the caller's sizeof(nrt_emu_net_plugin_t) */
  const char* name;   /* the plugin's table name, e.g. "AWS Libfabric" */
  const char* layout; /* "Neuron" or "NVIDIA" */
  int version;        /* the plugin's ABI version: 4, 5 or 6 */
  const char* file;   /* the file holding the plugin's table, or "" */
  bool adapted;       /* served through libnccom's v6 adapter */
  bool from_runtime;  /* the libnccom-net.so this runtime handed libnccom */
  const char* error;  /* why the query failed, else "" */
} nrt_emu_net_plugin_t;
NRT_EMU_PUBLIC NRT_STATUS nrt_emu_net_plugin(nrt_emu_net_plugin_t* out);

/* dlcloses libnccom-net.so and libnccom and resets the loader. */
NRT_EMU_PUBLIC void nrt_emu_unload_nccom(void);

/* The runtime log (last 256 lines, oldest first, each ending in '\n'):
 * copies what fits into buf, NUL-terminated when len > 0, and returns the
 * full length in bytes without the NUL (as snprintf). */
NRT_EMU_PUBLIC int nrt_emu_log_snapshot(char* buf, size_t len);
NRT_EMU_PUBLIC void nrt_emu_log_clear(void);

/* Debug queries for tests. */
/* dlsym calls made on libnccom's handle by the last load. */
NRT_EMU_PUBLIC int nrt_emu_debug_dlsym_count(void);
/* The loader's raw 37 slots (never NULL): all valid or all NULL. */
NRT_EMU_PUBLIC const nccom_export_table_t* nrt_emu_debug_slots(void);
/* The maps nec_build_port_and_rid_map recorded for device dev: copies up to
 * cap entries into the two arrays (either may be NULL) and returns the number
 * recorded, or -1 if none were. */
NRT_EMU_PUBLIC int nrt_emu_debug_port_and_rid_map(int dev, int* mla_indexes, int* host_device_ids,
                                                  int cap);

/* ==== Device-side memory the proxy touches ================================
 * One region = one memfd mapped MAP_SHARED: another process can map the same
 * file (nrt_emu_devmem_fd, e.g. through /proc/<pid>/fd/<fd>) and reach the
 * same words at the same offsets. Objects are carved from the region with a
 * bump allocator and live until nrt_emu_devmem_destroy. Objects holding
 * pointers (connectors, channels) are only meaningful in the creating
 * process's mapping. Allocation failures are logged (ERROR) and answer
 * NRT_RESOURCE; NULL arguments NRT_INVALID. */
typedef struct nrt_emu_devmem nrt_emu_devmem_t;

NRT_EMU_PUBLIC NRT_STATUS nrt_emu_devmem_create(size_t bytes, nrt_emu_devmem_t** out);
NRT_EMU_PUBLIC void nrt_emu_devmem_destroy(nrt_emu_devmem_t* mem);
NRT_EMU_PUBLIC int nrt_emu_devmem_fd(const nrt_emu_devmem_t* mem);
NRT_EMU_PUBLIC void* nrt_emu_devmem_base(const nrt_emu_devmem_t* mem);
NRT_EMU_PUBLIC size_t nrt_emu_devmem_size(const nrt_emu_devmem_t* mem);
/* Offset of p in the region, or (size_t)-1 when p is not inside it. */
NRT_EMU_PUBLIC size_t nrt_emu_devmem_offset(const nrt_emu_devmem_t* mem, const volatile void* p);

/* A semaphore: a zeroed 32-bit word. nec_inc_semaphore(addr, val) adds val
 * atomically: the emu's stand-in for the device's increment register (a
 * store of val there makes the hardware add val). *out is NULL on failure. */
NRT_EMU_PUBLIC NRT_STATUS nrt_emu_devmem_semaphore(nrt_emu_devmem_t* mem, volatile uint32_t** out);

/* A device-trigger word for the task gate, armed: it reads 0xFFFFFFFF until
 * the device posts (stores any other value); the proxy task then writes 0.
 * nrt_emu_proxy_arm_trigger re-arms it for the next execution. */
NRT_EMU_PUBLIC NRT_STATUS nrt_emu_devmem_trigger_word(nrt_emu_devmem_t* mem,
                                                      volatile uint32_t** out);
NRT_EMU_PUBLIC void nrt_emu_proxy_arm_trigger(volatile uint32_t* word);

/* The host index words of one connector: an enc_net_host_memory_t (8 folds ×
 * one 32-bit index on its own 128-byte line, 1024 bytes, 128-aligned, zeroed)
 * described by *out (mem_handle = the region, va, pa = region offset, size). */
NRT_EMU_PUBLIC NRT_STATUS nrt_emu_devmem_host_indices(nrt_emu_devmem_t* mem, enc_host_mem_t* out);

/* The dynamic-size table behind enc_host_mem_t.va, read and written by the
 * four dynamic-size callbacks. Header (16 bytes) then rank_n entries of 32
 * bytes, one per peer rank; counts and offsets are in ELEMENTS of the op's
 * data_type_sz. The device (or a test) fills send_count/send_offset/
 * recv_offset before publishing the slice; nec_set_recv_size_bytes stores
 * recv_count. A callback checks: input and va non-NULL, size ≥ header, magic,
 * size ≥ NRT_EMU_DYN_TABLE_BYTES(table rank_n), 1 ≤ rank_n ≤ table rank_n,
 * 0 ≤ peer < rank_n, data_type_sz > 0, no size_t overflow; a failure is one
 * ERROR line and the answer 0 (nothing stored). */
#define NRT_EMU_DYN_TABLE_MAGIC 0x4e59444eu /* "NDYN" little-endian */
typedef struct nrt_emu_dyn_table {
  uint32_t magic;  /* NRT_EMU_DYN_TABLE_MAGIC */
  uint32_t rank_n; /* entries that follow */
  uint64_t reserved;
} nrt_emu_dyn_table_t;
typedef struct nrt_emu_dyn_entry {
  uint64_t send_count;  /* elements this rank sends to the peer */
  uint64_t send_offset; /* elements from the send buffer's start */
  uint64_t recv_offset; /* elements from the receive buffer's start for the peer's data */
  uint64_t recv_count;  /* elements received from the peer (set by nec_set_recv_size_bytes) */
} nrt_emu_dyn_entry_t;
#define NRT_EMU_DYN_TABLE_BYTES(rank_n) \
  (sizeof(nrt_emu_dyn_table_t) + (size_t)(rank_n) * sizeof(nrt_emu_dyn_entry_t))
#define NRT_EMU_DYN_TABLE_ENTRIES(table) \
  ((nrt_emu_dyn_entry_t*)((char*)(table) + sizeof(nrt_emu_dyn_table_t)))

/* A zeroed table for rank_n (1..65536) peers with its header written, as the
 * shared input of a connector: (*out)->mem describes it, refcnt = 1. */
NRT_EMU_PUBLIC NRT_STATUS nrt_emu_devmem_dynamic_table(nrt_emu_devmem_t* mem, int rank_n,
                                                       enc_host_mem_shared_t** out);

/* An enc_net_connector_t: fold_n (1..8), its own host index words
 * (net_host_mem), the dynamic input (may be NULL) and libnccom's connector
 * (from neuronGetNetConnector; may be NULL); the other fields zero. */
NRT_EMU_PUBLIC NRT_STATUS nrt_emu_devmem_connector(nrt_emu_devmem_t* mem, int fold_n,
                                                   enc_host_mem_shared_t* dynamic_input,
                                                   void* nccl_connector, enc_net_connector_t** out);

/* An enc_channel_prefix_t (what net_ops_info_t.enc_channel points at):
 * pattern RING or MESH; either connector may be NULL. */
NRT_EMU_PUBLIC NRT_STATUS nrt_emu_devmem_channel(nrt_emu_devmem_t* mem, int id,
                                                 enc_pattern_t pattern,
                                                 enc_net_connector_t* net_recv,
                                                 enc_net_connector_t* net_send,
                                                 enc_channel_prefix_t** out);

/* ==== The proxy worker (libnrt's driver side) =============================
 * One queue and one worker thread ("proxy-<tid>") per shared-proxy group.
 * A rank's group is rank / NEURON_RT_RANKS_PER_NETWORK_PROXY (1..4096,
 * default 1: one worker per rank). The rank is the caller's local rank (the
 * runtime's vNC index in this process). Handles of one group share the queue
 * and its worker; the last release stops and joins the worker. The worker's
 * first act is libnccom's neuronSetAffinity(comm, NULL, &saved, -1) for the
 * comm that created the group. libnccom must be loaded (or a test table
 * installed, nrt_emu_debug_install_table). */
typedef struct nrt_emu_proxy nrt_emu_proxy_t;               /* one comm's seat in a group */
typedef struct nrt_emu_proxy_status nrt_emu_proxy_status_t; /* one task's published status */

typedef enum {
  NRT_EMU_TASK_INIT = 0,
  NRT_EMU_TASK_PROGRESSING = 1,
  NRT_EMU_TASK_WAITING_DEVICE_TRIGGER = 2,
  NRT_EMU_TASK_IDLE = 3,
  NRT_EMU_TASK_DONE = 4
} nrt_emu_task_run_state_t;

#define NRT_EMU_MAX_STREAMS 4
#define NRT_EMU_MAX_BLOCKS 1024

/* One basic block's three FIFOs (they must outlive the task). */
typedef struct nrt_emu_proxy_block {
  uint32_t basic_block_id;
  net_ops_info_t* ops;
  int ops_n;
  net_src_addr_t* src;
  int src_n;
  net_dest_addr_t* dst;
  int dst_n;
} nrt_emu_proxy_block_t;

/* One stream's program in an execution: its basic blocks in run order. */
typedef struct nrt_emu_proxy_stream {
  uint32_t stream; /* 0..3, distinct within a task */
  const nrt_emu_proxy_block_t* blocks;
  int blocks_n; /* 1..NRT_EMU_MAX_BLOCKS */
} nrt_emu_proxy_stream_t;

/* A network task: one execution of comm over 1..4 streams. When
 * device_gated, the task waits until no trigger_words[i] (i < streams_n)
 * reads 0xFFFFFFFF, then writes 0 to each. When skip, it finishes at once
 * with success without calling libnccom. exec_id names the task in messages. */
typedef struct nrt_emu_network_task {
  const nrt_emu_proxy_stream_t* streams;
  int streams_n;
  bool device_gated;
  volatile uint32_t* trigger_words[NRT_EMU_MAX_STREAMS];
  bool skip;
  uint64_t exec_id;
} nrt_emu_network_task_t;

/* Joins (or creates) the group of `rank`. nec_dev appears in messages. */
NRT_EMU_PUBLIC NRT_STATUS nrt_emu_proxy_acquire(void* comm, int rank, int nec_dev,
                                                nrt_emu_proxy_t** out);
/* Leaves the group; the last member stops and joins the worker (tasks still
 * queued or active then finish with NRT_CLOSED). Outstanding statuses stay
 * valid. */
NRT_EMU_PUBLIC void nrt_emu_proxy_release(nrt_emu_proxy_t* proxy);
NRT_EMU_PUBLIC int nrt_emu_proxy_group(const nrt_emu_proxy_t* proxy);
/* The worker's kernel thread id (its name is "proxy-<tid>"). */
NRT_EMU_PUBLIC int nrt_emu_proxy_worker_tid(const nrt_emu_proxy_t* proxy);
/* Members of proxy's group right now. */
NRT_EMU_PUBLIC int nrt_emu_proxy_refcount(const nrt_emu_proxy_t* proxy);
/* Live worker threads in the process. */
NRT_EMU_PUBLIC int nrt_emu_proxy_worker_count(void);

/* Validates and queues a network task; *status_out is its status (free it
 * with nrt_emu_proxy_status_free). A refused task is NRT_INVALID with the
 * reason logged and nothing queued. */
NRT_EMU_PUBLIC NRT_STATUS nrt_emu_proxy_submit(nrt_emu_proxy_t* proxy,
                                               const nrt_emu_network_task_t* task,
                                               nrt_emu_proxy_status_t** status_out);
/* Waits up to timeout_ms for the task to reach DONE. Returns its status
 * (NRT_SUCCESS, or what libnccom returned — NRT_NETWORK_PROXY_FAILURE from a
 * progress tick —, or NRT_CLOSED), or NRT_TIMEOUT. A timeout or a failure
 * is logged and kept as the status message, naming the task:
 *   [nec_dev D gid G] Timeout exceeded: Waiting on proxy task type 1 (network
 *   task exec E, run state S): T sec
 *   [nec_dev D gid G] Proxy failed to execute task, status = N (network task
 *   exec E): reason
 * The logged line leaves out the cause libnccom forwarded (libnccom logged it
 * itself); the status message ends with it (": cause"). */
NRT_EMU_PUBLIC NRT_STATUS nrt_emu_proxy_wait(nrt_emu_proxy_status_t* status, uint32_t timeout_ms);
/* For a device loop that waits on its network task: steps the group's
 * active tasks once on the calling thread, unless another thread is stepping
 * them (then nothing). 1 when a task moved, else 0. While device loops help,
 * the group's worker stands back instead of polling beside them. */
NRT_EMU_PUBLIC int nrt_emu_proxy_help(nrt_emu_proxy_t* proxy);
/* For a device loop that helped and leaves while its task may still run (an
 * error ended its wait): the worker stops standing back at once instead of
 * at the end of its sleep (at most 5 ms). */
NRT_EMU_PUBLIC void nrt_emu_proxy_stop_helping(nrt_emu_proxy_t* proxy);
/* How many times the group's worker began to stand back for a helper. */
NRT_EMU_PUBLIC uint64_t nrt_emu_proxy_stand_backs(nrt_emu_proxy_t* proxy);
NRT_EMU_PUBLIC nrt_emu_task_run_state_t nrt_emu_proxy_run_state(const nrt_emu_proxy_status_t* s);
/* The last timeout/failure message ("" when none); valid until the next
 * wait or free. One waiter per status at a time (the message is the
 * status's own buffer); the run state may be read from any thread. */
NRT_EMU_PUBLIC const char* nrt_emu_proxy_status_message(const nrt_emu_proxy_status_t* s);
/* The same failure without the log line's words, for a caller that adds
 * its own context: "network task exec E rank R: neuronNetworkProxyProgress(
 * stream S, basic block B) returned N: <libnccom's forwarded cause>" ("" when
 * none; the message itself for a timeout). Valid as long as the message. */
NRT_EMU_PUBLIC const char* nrt_emu_proxy_status_reason(const nrt_emu_proxy_status_t* s);
NRT_EMU_PUBLIC void nrt_emu_proxy_status_free(nrt_emu_proxy_status_t* s);

/* ==== Collectives: the reference device engine ============================
 * A CPU engine playing the Neuron device: per-rank device memory in shared
 * memory, ring algorithms over the communicator's channels, intra-host hops
 * as direct copies into the peer's device memory, inter-host hops as basic
 * blocks of descriptor FIFOs run by libnccom's network proxy (through the
 * proxy worker above) and waited on through semaphores. See
 * docs/internals/emu-engine.md and docs/user-guide.md ("The reference
 * runtime's collective API"). */
typedef struct nrt_emu_ccom nrt_emu_ccom_t; /* one rank: its comm + device */

typedef enum {
  NRT_EMU_INT8 = 0,
  NRT_EMU_UINT8,
  NRT_EMU_INT16,
  NRT_EMU_UINT16,
  NRT_EMU_INT32,
  NRT_EMU_UINT32,
  NRT_EMU_INT64,
  NRT_EMU_UINT64,
  NRT_EMU_FP16,
  NRT_EMU_BF16,
  NRT_EMU_FP32,
  NRT_EMU_FP64,
  NRT_EMU_FP8_E4M3,
  NRT_EMU_FP8_E5M2
} nrt_emu_dtype_t;

typedef enum {
  NRT_EMU_SUM = 0,
  NRT_EMU_PROD,
  NRT_EMU_MIN,
  NRT_EMU_MAX,
  NRT_EMU_AVG
} nrt_emu_redop_t;

typedef enum {
  NRT_EMU_ALL_REDUCE = 0,
  NRT_EMU_ALL_GATHER,
  NRT_EMU_REDUCE_SCATTER,
  NRT_EMU_BROADCAST,
  NRT_EMU_REDUCE,
  NRT_EMU_ALL_TO_ALL,
  NRT_EMU_PERMUTE /* send/recv: every rank sends to send_to, receives from recv_from */
} nrt_emu_coll_t;

typedef struct nrt_emu_ccom_config {
  size_t struct_size;       /* sizeof(nrt_emu_ccom_config_t) */
  int rank;                 /* 0..rank_n-1 */
  int rank_n;               /* ranks in the communicator */
  const char* root_comm_id; /* "host:port" where rank 0 listens (NEURON_RT_ROOT_COMM_ID); NULL =
                               that variable */
  int host;       /* emulated host id (virtual_server_id); ranks with one host id share a host */
  int local_rank; /* device index on that host, 0..local_n-1 */
  int local_n;    /* ranks on that host (NEURON_RT_EMU_DEVICES is set from it when unset) */
  size_t device_bytes; /* device memory of this rank; 0 = 256 MiB */
  uint32_t timeout_ms; /* bound of every wait in a collective; 0 = 60000 */
} nrt_emu_ccom_config_t;

/* Loads libnccom (nrt_emu_load_nccom), joins the communicator through
 * neuronInitGlobalComm, builds its graph and transports, creates the device
 * memory and maps the same-host peers'. Collective: every rank calls it. */
NRT_EMU_PUBLIC NRT_STATUS nrt_emu_ccom_init(const nrt_emu_ccom_config_t* cfg, nrt_emu_ccom_t** out);
/* Frees everything (collective: peers may still read this rank's memory
 * until all have closed). NULL is a no-op. */
NRT_EMU_PUBLIC void nrt_emu_ccom_close(nrt_emu_ccom_t* c);
/* The reason of the last failure on c ("" when none); with c = NULL, why
 * this thread's last nrt_emu_ccom_init failed. Cause first: "CAUSE
 * (CONTEXT)" — the innermost cause (the reason libnccom forwarded to the
 * runtime's log during the call, when the failure carries it; else the
 * runtime's own), then, in parentheses, what the runtime was doing
 * ("rank 0 of 2: neuronInitGlobalComm returned status 2"). */
NRT_EMU_PUBLIC const char* nrt_emu_ccom_error(const nrt_emu_ccom_t* c);
/* The innermost cause of that same failure alone: CAUSE of
 * nrt_emu_ccom_error ("" when none), for a caller that wraps the failure in
 * context of its own and keeps the cause first. */
NRT_EMU_PUBLIC const char* nrt_emu_ccom_cause(const nrt_emu_ccom_t* c);
/* CONTEXT of nrt_emu_ccom_error ("" when it has none). */
NRT_EMU_PUBLIC const char* nrt_emu_ccom_context(const nrt_emu_ccom_t* c);
NRT_EMU_PUBLIC int nrt_emu_ccom_rank(const nrt_emu_ccom_t* c);
NRT_EMU_PUBLIC int nrt_emu_ccom_rank_n(const nrt_emu_ccom_t* c);
/* Ring channels the engine spreads an operation across. */
NRT_EMU_PUBLIC int nrt_emu_ccom_channel_n(const nrt_emu_ccom_t* c);

/* Device memory (host-addressable in the emu), 64-byte aligned. */
NRT_EMU_PUBLIC NRT_STATUS nrt_emu_ccom_alloc(nrt_emu_ccom_t* c, size_t bytes, void** out);
NRT_EMU_PUBLIC void nrt_emu_ccom_free(nrt_emu_ccom_t* c, void* p);

/* coll, dtype and op hold an nrt_emu_coll_t, nrt_emu_dtype_t and
 * nrt_emu_redop_t value as plain integers: the engine checks the number
 * before it treats it as one of the enum's values, so a caller's garbage is
 * an error, never a load of an invalid enum. */
typedef struct nrt_emu_coll_args {
  int32_t coll;  /* nrt_emu_coll_t */
  int32_t dtype; /* nrt_emu_dtype_t */
  int32_t op;    /* nrt_emu_redop_t: all-reduce, reduce-scatter, reduce */
  /* Elements: all-reduce, broadcast, reduce, permute = the whole buffer;
   * all-gather = this rank's input (output = rank_n × count);
   * reduce-scatter = this rank's output (input = rank_n × count);
   * all-to-all = one block per peer (both buffers = rank_n × count). */
  size_t count;
  /* Device memory. In place as NCCL: send == recv (all-reduce, broadcast,
   * reduce), send == recv + rank*count (all-gather), recv == send +
   * rank*count (reduce-scatter); all-to-all and permute are never in place.
   * Other overlaps are refused. */
  const void* send;
  void* recv;
  int root;      /* broadcast, reduce */
  int send_to;   /* permute: -1 = send nothing */
  int recv_from; /* permute: -1 = receive nothing */
} nrt_emu_coll_args_t;

/* Runs one collective to completion (every rank calls it with matching
 * arguments). A peer that fails or dies ends it with an error naming that
 * rank, within cfg.timeout_ms. */
NRT_EMU_PUBLIC NRT_STATUS nrt_emu_ccom_run(nrt_emu_ccom_t* c, const nrt_emu_coll_args_t* a);
/* Which algorithm nrt_emu_ccom_run(c, a) runs, as the engine decides it
 * from a's collective, data type and count on this communicator (the
 * buffers, root and peers are not looked at; no rank is contacted):
 *   "rd"        recursive doubling over the RDH peers: all-reduce up to
 *               NEURON_RT_EMU_ALLREDUCE_RD_BYTES, all-gather whose output is
 *               up to NEURON_RT_EMU_ALLGATHER_RD_BYTES (both capped to one
 *               slice; never on one rank or over kangaRing lanes);
 *   "kangaring" the kangaRing lanes (trn3-switch-v1 on one host: all-reduce,
 *               all-gather, reduce-scatter);
 *   "ring"      the ring channels (everything else but the two below);
 *   "peer"      direct exchanges with each peer (all-to-all, permute).
 * *name is a static string. NRT_INVALID for a NULL argument or an unknown
 * collective, type or reduction, or a count that overflows (the reason in
 * nrt_emu_ccom_error(c); *name NULL). */
NRT_EMU_PUBLIC NRT_STATUS nrt_emu_ccom_algorithm(nrt_emu_ccom_t* c, const nrt_emu_coll_args_t* a,
                                                 const char** name);
/* Every rank waits for every other (through libnccom's bootstrap). */
NRT_EMU_PUBLIC NRT_STATUS nrt_emu_ccom_barrier(nrt_emu_ccom_t* c);

/* Test seam: makes the loader answer as if libnccom had loaded with this
 * table (copied; slots may be NULL — the proxy checks the ones it uses).
 * NULL uninstalls (as nrt_emu_unload_nccom). Refused (NRT_INVALID) while a
 * real libnccom is loaded. */
NRT_EMU_PUBLIC NRT_STATUS nrt_emu_debug_install_table(const nccom_export_table_t* table);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* NRT_EMU_H */
