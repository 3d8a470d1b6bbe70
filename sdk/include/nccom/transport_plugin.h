/*
 * nccom/transport_plugin.h — the vtable of a transport plugin
 * (nccom_plugin_descriptor_t.kind == NCCOM_PLUGIN_KIND_TRANSPORT).
 *
 * A transport connects this rank to a peer for one channel and, when it
 * carries data on the host side, supplies the proxy primitive that moves the
 * runtime's descriptor FIFOs. In tree: "p2p" (intra-node,
 * proxy-free: op slots NULL) and "net_neuron" (inter-node over the selected
 * network plugin: the netNeuronSendProxy / netNeuronRecvProxy primitives).
 *
 * The host owns the communicator, the bootstrap and the scheduler; the
 * transport owns its connectors and ops. Everything a transport needs from
 * the host or the runtime arrives in nccom_transport_comm_t, so a transport
 * never dlsyms libnrt or the net plugin itself (and tests can script both).
 *
 * Statuses: NCCOM_PLUGIN_OK, or an error with a message in the caller's
 * err buffer (always NUL-terminated when err_len > 0).
 *
 * Pure C99; usable from C++.
 */
#ifndef NCCOM_TRANSPORT_PLUGIN_H
#define NCCOM_TRANSPORT_PLUGIN_H

#include "nccom/net_v6.h"
#include "nccom/nrt_abi.h"
#include "nccom/plugin.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NCCOM_TRANSPORT_OPS_VERSION 1u
#define NCCOM_TRANSPORT_CONNECT_BYTES 128 /* ncclConnect: one exchange unit per connection */
/* The transport channel of the connections neuronExpandConnectivity makes
 * (MESH / RDH peers): one past the last ring channel (setup carries a
 * channel, not a pattern). */
#define NCCOM_TRANSPORT_MESH_CHANNEL 32

/* One rank, from the communicator's peer records. */
typedef struct nccom_transport_peer {
  int32_t rank;
  int32_t device;     /* runtime device (cudaDev) */
  uint64_t host_hash; /* equal = same (virtual) server */
  uint64_t pid_hash;  /* equal = same process */
  int32_t mla_idx;
  int32_t pod_node_id;
  int64_t bus_id; /* PCI bus id of the device, for log lines */
} nccom_transport_peer_t;

/* A received size no plugin writes: a transport puts it in `sizes` before
 * calling `test`, and an entry that still holds it when the request is done
 * was left unwritten. The layouts differ on whether a plugin must write it:
 * aws-ofi-nccl's Neuron tables always do; plugins built against NVIDIA's
 * headers need not, since NCCL read a received size only to size a GPU
 * flush. A transport that needs the size (a receive whose length only the
 * sender knows) must fail naming the plugin when it is left unwritten. */
#define NCCOM_NET_SIZE_UNREPORTED INT32_MIN

/* The selected network as a transport should call it: the ncclNet_v6 calls
 * (same arguments, same results, the host's clamps and bounded connect /
 * accept included) with the host's context first. Slots the net does not
 * have are NULL, as in a native table (get_mr_key, iwrite, iwrite_inline,
 * iread without RMA; reg_mr_dma_buf, iflush when absent). init and fini are
 * the host's and are not offered. Valid until the communicator is freed. */
typedef struct nccom_transport_net {
  uint32_t struct_size; /* sizeof(nccom_transport_net_t) */
  uint32_t reserved;
  void* ctx;        /* the first argument of every slot */
  const char* name; /* the net plugin's name */
  ncclResult_t (*devices)(void* ctx, int* ndev);
  ncclResult_t (*get_properties)(void* ctx, int dev, ncclNetProperties_v6_t* props);
  ncclResult_t (*listen)(void* ctx, int dev, void* handle, void** listen_comm);
  ncclResult_t (*connect)(void* ctx, int dev, void* handle, void** send_comm);
  ncclResult_t (*accept)(void* ctx, void* listen_comm, void** recv_comm);
  ncclResult_t (*reg_mr)(void* ctx, void* comm, void* data, size_t size, int type, void** mhandle);
  ncclResult_t (*reg_mr_dma_buf)(void* ctx, void* comm, void* data, size_t size, int type,
                                 uint64_t offset, int fd, void** mhandle);
  ncclResult_t (*dereg_mr)(void* ctx, void* comm, void* mhandle);
  ncclResult_t (*isend)(void* ctx, void* send_comm, void* data, int size, int tag, void* mhandle,
                        void** request);
  ncclResult_t (*irecv)(void* ctx, void* recv_comm, int n, void** data, int* sizes, int* tags,
                        void** mhandles, void** request);
  ncclResult_t (*iflush)(void* ctx, void* recv_comm, int n, void** data, int* sizes,
                         void** mhandles, void** request);
  ncclResult_t (*test)(void* ctx, void* request, int* done, int* sizes);
  ncclResult_t (*close_send)(void* ctx, void* send_comm);
  ncclResult_t (*close_recv)(void* ctx, void* recv_comm);
  ncclResult_t (*close_listen)(void* ctx, void* listen_comm);
  ncclResult_t (*get_mr_key)(void* ctx, void* mhandle, uint64_t* mr_key);
  ncclResult_t (*iwrite)(void* ctx, void* send_comm, void* src, size_t size, void* src_mhandle,
                         uint64_t dest, uint64_t mr_key, void** request);
  ncclResult_t (*iwrite_inline)(void* ctx, void* send_comm, void* src, size_t size, uint64_t dest,
                                uint64_t mr_key, void** request);
  ncclResult_t (*iread)(void* ctx, void* recv_comm, void* dest, size_t size, void* dest_mhandle,
                        uint64_t src, uint64_t mr_key, void** request);
} nccom_transport_net_t;

/* What the host lends a transport for one communicator. Valid until the
 * communicator is freed. */
typedef struct nccom_transport_comm {
  uint32_t struct_size;
  int32_t rank;
  int32_t n_ranks;
  int32_t sidelink;                    /* Trn2/Trn3: receives confirm arrival with a 4-byte iread */
  const nccom_transport_peer_t* peers; /* n_ranks entries */

  /* The selected network: the Neuron ncclNet_v6 calls with the host's
   * context as first argument (v5/v4/NVIDIA plugins are adapted by the
   * host, whose clamps and bounded connect/accept apply), its name and
   * device count. NULL if none. */
  const nccom_transport_net_t* net;
  const char* net_name;
  int32_t net_devices;
  int32_t reserved;

  /* The runtime callbacks the primitives use, routed through the host. */
  void (*inc_semaphore)(volatile uint32_t* sem_inc_addr, uint32_t val);
  size_t (*dynamic_send_size)(enc_host_mem_t* dyn, size_t data_type_sz, int dst_rank, int rank_n);
  size_t (*dynamic_send_offset)(enc_host_mem_t* dyn, size_t data_type_sz, int dst_rank, int rank_n);
  size_t (*dynamic_recv_offset)(enc_host_mem_t* dyn, size_t data_type_sz, int src_rank, int rank_n);
  void (*set_recv_size)(enc_host_mem_t* dyn, size_t recv_size_bytes, size_t data_type_sz,
                        int src_rank, int rank_n);

  /* Appended (present when struct_size covers it): the NIC the topology
   * chose for each transport channel (ncclTopoGetNetDev),
   * NCCOM_TRANSPORT_MESH_CHANNEL + 1 entries; -1 (or NULL) = the transport
   * decides. An index into the topology's NICs: map it onto the net's
   * devices modulo net_devices. */
  const int32_t* channel_nic;

  /* Appended: the net plugin as error messages should name it, with its
   * layout and file ("TPN (Neuron ncclNet_v4) from /opt/x/libtpn.so");
   * NULL if none. `net_name` stays the short name for log lines. */
  const char* net_origin;
} nccom_transport_comm_t;

typedef enum {
  NCCOM_TRANSPORT_RECV = 0, /* ncclProxyArgs.proxyType values */
  NCCOM_TRANSPORT_SEND = 1
} nccom_transport_direction_t;

typedef struct nccom_transport_ops {
  nccom_plugin_ops_t head; /* head.struct_size == sizeof(nccom_transport_ops_t) */
  uint32_t ops_version;    /* NCCOM_TRANSPORT_OPS_VERSION */
  uint32_t reserved;

  /* Mandatory. *ok = 1 if this transport can connect `me` to `peer`. */
  nccom_plugin_status_t (*can_connect)(void* ctx, const nccom_transport_comm_t* comm,
                                       const nccom_transport_peer_t* me,
                                       const nccom_transport_peer_t* peer, int* ok);

  /* Mandatory. First half of a connection: allocate the connector for
   * (direction, channel, peer) and write this side's exchange blob. */
  nccom_plugin_status_t (*setup)(void* ctx, const nccom_transport_comm_t* comm,
                                 nccom_transport_direction_t dir, int channel,
                                 const nccom_transport_peer_t* peer,
                                 uint8_t blob_out[NCCOM_TRANSPORT_CONNECT_BYTES], void** connector,
                                 char* err, size_t err_len);

  /* Mandatory. Second half, given the peer's blob. Non-blocking: returns OK
   * with *done = 0 while the connection is in progress; the host calls it
   * again (within its connect timeout) until *done = 1. */
  nccom_plugin_status_t (*connect)(void* ctx, void* connector,
                                   const uint8_t peer_blob[NCCOM_TRANSPORT_CONNECT_BYTES],
                                   int* done, char* err, size_t err_len);

  /* Mandatory. Releases a connector (connected or not). */
  void (*free_connector)(void* ctx, void* connector);

  /* Optional (NULL for a proxy-free transport). Memory registration on a
   * connector's network comm (neuronNetRegMr / neuronNetDeregMr). */
  nccom_plugin_status_t (*reg_mr)(void* ctx, void* connector, void* data, size_t size, int type,
                                  void** mhandle, char* err, size_t err_len);
  nccom_plugin_status_t (*dereg_mr)(void* ctx, void* connector, void* mhandle);

  /* Optional (NULL for a proxy-free transport). One direction of one
   * registered basic block: the op walks `fifo` (net_src_addr_t[] for SEND,
   * net_dest_addr_t[] for RECV) against `ops`, reaching its connections
   * through ops[i].enc_channel -> net_send/net_recv -> nccl_connector (a
   * connector this transport created). The host validated the FIFO grammar
   * before this call; the arrays outlive the op. */
  nccom_plugin_status_t (*create_op)(void* ctx, const nccom_transport_comm_t* comm,
                                     nccom_transport_direction_t dir, const net_ops_info_t* ops,
                                     int ops_n, const void* fifo, int fifo_n, void** op, char* err,
                                     size_t err_len);
  /* One tick. *idle = 1 if nothing moved; *execution_done = 1 once the op
   * reached EXEC_COMPLETE (the host then parks it and calls op_rearm). */
  nccom_plugin_status_t (*op_progress)(void* op, int* idle, int* execution_done, char* err,
                                       size_t err_len);
  nccom_plugin_status_t (*op_rearm)(void* op, char* err, size_t err_len);
  /* Where the op stands, for the host's stall warning. */
  void (*op_describe)(void* op, char* buf, size_t len);
  void (*op_free)(void* op);

  /* Appended (read only when head.struct_size covers it; NULL: unknown).
   * What a stalled op waits on: the rank of the peer whose data or
   * completion it needs (*peer_rank) and the transport channel (*channel,
   * NCCOM_TRANSPORT_MESH_CHANNEL for a mesh connection). Returns 1 when it
   * knows, 0 when it waits on nothing in particular. Called only by the
   * host's stall watchdog, never on the data path. */
  int (*op_waiting_on)(void* op, int* peer_rank, int* channel);

  /* Appended (read only when head.struct_size covers it; NULL: unknown).
   * Where the wait of op_waiting_on sits, in a few words for the health
   * report, e.g. "its oldest request (RECV) is in the net plugin X (Neuron
   * ncclNet_v6) from /opt/x.so"; "" (buf[0] = 0) when it is not inside a
   * net plugin request. Called only by the host's stall watchdog. */
  void (*op_waiting_in)(void* op, char* buf, size_t len);
} nccom_transport_ops_t;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* NCCOM_TRANSPORT_PLUGIN_H */
