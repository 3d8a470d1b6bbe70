/*
 * nccom/net_v4.h — the Neuron ncclNet_v4 ABI (16 slots, 128 bytes) and its
 * 40-byte properties. Handles are 64 bytes; connect and accept block;
 * single-buffer irecv/iflush; no tags, no RMA, no fini.
 * Identical to NVIDIA's v4 except regMr's size (size_t here, int there).
 * FROZEN. Pure C99; usable from C++.
 */
#ifndef NCCOM_NET_V4_H
#define NCCOM_NET_V4_H

#include <nccom/net_common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  char *name;        /*  0 */
  char *pciPath;     /*  8 */
  uint64_t guid;     /* 16 */
  int ptrSupport;    /* 24 */
  int speed;         /* 28 Mbps */
  int port;          /* 32 */
  int maxComms;      /* 36 */
} ncclNetProperties_v4_t;

typedef struct {
  const char *name;
  ncclResult_t (*init)(ncclDebugLogger_t logFunction);
  ncclResult_t (*devices)(int *ndev);
  ncclResult_t (*getProperties)(int dev, ncclNetProperties_v4_t *props);
  ncclResult_t (*listen)(int dev, void *handle, void **listenComm);
  ncclResult_t (*connect)(int dev, void *handle, void **sendComm);
  ncclResult_t (*accept)(void *listenComm, void **recvComm);
  ncclResult_t (*regMr)(void *comm, void *data, size_t size, int type, void **mhandle);
  ncclResult_t (*deregMr)(void *comm, void *mhandle);
  ncclResult_t (*isend)(void *sendComm, void *data, int size, void *mhandle, void **request);
  ncclResult_t (*irecv)(void *recvComm, void *data, int size, void *mhandle, void **request);
  ncclResult_t (*iflush)(void *recvComm, void *data, int size, void *mhandle, void **request);
  ncclResult_t (*test)(void *request, int *done, int *size);
  ncclResult_t (*closeSend)(void *sendComm);
  ncclResult_t (*closeRecv)(void *recvComm);
  ncclResult_t (*closeListen)(void *listenComm);
} ncclNet_v4_t;

#define NCCL_NET_PLUGIN_SYMBOL_V4 "ncclNetPlugin_v4"

NCCOM_NET_ASSERT(sizeof(ncclNetProperties_v4_t) == 40, props_v4_size);
NCCOM_NET_ASSERT(offsetof(ncclNetProperties_v4_t, maxComms) == 36, props_v4_maxcomms);
NCCOM_NET_ASSERT(sizeof(ncclNet_v4_t) == 128, net_v4_size);
NCCOM_NET_ASSERT(offsetof(ncclNet_v4_t, devices) == 16, net_v4_devices);
NCCOM_NET_ASSERT(offsetof(ncclNet_v4_t, regMr) == 56, net_v4_regmr);
NCCOM_NET_ASSERT(offsetof(ncclNet_v4_t, closeListen) == 120, net_v4_closelisten);

#ifdef __cplusplus
}
#endif

#endif /* NCCOM_NET_V4_H */
