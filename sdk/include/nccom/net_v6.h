/*
 * nccom/net_v6.h — the Neuron ncclNet_v6 ABI (22 slots, 176 bytes), the one
 * libnccom binds through the symbol "ncclNetPlugin_v6".
 * v6 = v5 + fini after init. FROZEN: never edit; a new ABI is a new header.
 *
 * Semantics the host relies on:
 *  - connect/accept are non-blocking: ncclSuccess with a NULL out-pointer
 *    means "not yet, call again".
 *  - isend/irecv/iread may return ncclSuccess with *request == NULL: "cannot
 *    post now (e.g. NCCL_NET_MAX_REQUESTS in flight), retry".
 *  - irecv/iflush take arrays but Neuron supports only n == 1 (maxRecvs 1).
 *  - test sets *done and, when sizes is not NULL and done, the byte counts.
 *  - getMrKey/iwrite/iwriteInline/iread only when rma_supported == 1.
 *  - fini is called exactly once, after every comm is closed.
 * Pure C99; usable from C++.
 */
#ifndef NCCOM_NET_V6_H
#define NCCOM_NET_V6_H

#include <nccom/net_common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 80 bytes; shared with v5. */
typedef struct {
  char *name;                    /*  0 logging name */
  char *pciPath;                 /*  8 sysfs path of the NIC */
  uint64_t guid;                 /* 16 NIC identity */
  int ptrSupport;                /* 24 NCCL_PTR_HOST | NCCL_PTR_NEURON */
  int regIsGlobal;               /* 28 registrations not tied to one comm */
  int speed;                     /* 32 port speed, Mbps */
  int port;                      /* 36 */
  float latency;                 /* 40 */
  int maxComms;                  /* 44 */
  int maxRecvs;                  /* 48 1 on Neuron */
  size_t max_write_inline_size;  /* 56 */
  size_t max_mr_key_size;        /* 64 */
  int rma_supported;             /* 72 1: getMrKey/iwrite/iwriteInline/iread usable */
} ncclNetProperties_v6_t;

typedef struct {
  const char *name;
  ncclResult_t (*init)(ncclDebugLogger_t logFunction);
  ncclResult_t (*fini)(void);
  ncclResult_t (*devices)(int *ndev);
  ncclResult_t (*getProperties)(int dev, ncclNetProperties_v6_t *props);
  ncclResult_t (*listen)(int dev, void *handle, void **listenComm);
  ncclResult_t (*connect)(int dev, void *handle, void **sendComm);
  ncclResult_t (*accept)(void *listenComm, void **recvComm);
  ncclResult_t (*regMr)(void *comm, void *data, size_t size, int type, void **mhandle);
  ncclResult_t (*regMrDmaBuf)(void *comm, void *data, size_t size, int type, uint64_t offset,
                              int fd, void **mhandle);
  ncclResult_t (*deregMr)(void *comm, void *mhandle);
  ncclResult_t (*isend)(void *sendComm, void *data, int size, int tag, void *mhandle,
                        void **request);
  ncclResult_t (*irecv)(void *recvComm, int n, void **data, int *sizes, int *tags,
                        void **mhandles, void **request);
  ncclResult_t (*iflush)(void *recvComm, int n, void **data, int *sizes, void **mhandles,
                         void **request);
  ncclResult_t (*test)(void *request, int *done, int *sizes);
  ncclResult_t (*closeSend)(void *sendComm);
  ncclResult_t (*closeRecv)(void *recvComm);
  ncclResult_t (*closeListen)(void *listenComm);
  ncclResult_t (*getMrKey)(void *mhandle, uint64_t *mr_key);
  ncclResult_t (*iwrite)(void *sendComm, void *src, size_t size, void *src_mhandle, uint64_t dest,
                         uint64_t mr_key, void **request);
  ncclResult_t (*iwriteInline)(void *sendComm, void *src, size_t size, uint64_t dest,
                               uint64_t mr_key, void **request);
  ncclResult_t (*iread)(void *recvComm, void *dest, size_t size, void *dest_mhandle, uint64_t src,
                        uint64_t mr_key, void **request);
} ncclNet_v6_t;

#define NCCL_NET_PLUGIN_SYMBOL_V6 "ncclNetPlugin_v6"

NCCOM_NET_ASSERT(sizeof(ncclNetProperties_v6_t) == 80, props_v6_size);
NCCOM_NET_ASSERT(offsetof(ncclNetProperties_v6_t, ptrSupport) == 24, props_v6_ptr);
NCCOM_NET_ASSERT(offsetof(ncclNetProperties_v6_t, regIsGlobal) == 28, props_v6_reg);
NCCOM_NET_ASSERT(offsetof(ncclNetProperties_v6_t, latency) == 40, props_v6_latency);
NCCOM_NET_ASSERT(offsetof(ncclNetProperties_v6_t, maxRecvs) == 48, props_v6_maxrecvs);
NCCOM_NET_ASSERT(offsetof(ncclNetProperties_v6_t, max_write_inline_size) == 56, props_v6_inline);
NCCOM_NET_ASSERT(offsetof(ncclNetProperties_v6_t, max_mr_key_size) == 64, props_v6_key);
NCCOM_NET_ASSERT(offsetof(ncclNetProperties_v6_t, rma_supported) == 72, props_v6_rma);
NCCOM_NET_ASSERT(sizeof(ncclNet_v6_t) == 176, net_v6_size);
NCCOM_NET_ASSERT(offsetof(ncclNet_v6_t, init) == 8, net_v6_init);
NCCOM_NET_ASSERT(offsetof(ncclNet_v6_t, fini) == 16, net_v6_fini);
NCCOM_NET_ASSERT(offsetof(ncclNet_v6_t, devices) == 24, net_v6_devices);
NCCOM_NET_ASSERT(offsetof(ncclNet_v6_t, regMr) == 64, net_v6_regmr);
NCCOM_NET_ASSERT(offsetof(ncclNet_v6_t, isend) == 88, net_v6_isend);
NCCOM_NET_ASSERT(offsetof(ncclNet_v6_t, irecv) == 96, net_v6_irecv);
NCCOM_NET_ASSERT(offsetof(ncclNet_v6_t, test) == 112, net_v6_test);
NCCOM_NET_ASSERT(offsetof(ncclNet_v6_t, getMrKey) == 144, net_v6_getmrkey);
NCCOM_NET_ASSERT(offsetof(ncclNet_v6_t, iread) == 168, net_v6_iread);

#ifdef __cplusplus
}
#endif

#endif /* NCCOM_NET_V6_H */
