/*
 * nccom/net_v5.h — the Neuron ncclNet_v5 ABI (21 slots, 168 bytes): v6
 * without fini. Its init may register a process-exit
 * finalizer. Same 80-byte properties as v6. FROZEN.
 * Pure C99; usable from C++.
 */
#ifndef NCCOM_NET_V5_H
#define NCCOM_NET_V5_H

#include <nccom/net_v6.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef ncclNetProperties_v6_t ncclNetProperties_v5_t;

typedef struct {
  const char *name;
  ncclResult_t (*init)(ncclDebugLogger_t logFunction);
  ncclResult_t (*devices)(int *ndev);
  ncclResult_t (*getProperties)(int dev, ncclNetProperties_v5_t *props);
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
} ncclNet_v5_t;

#define NCCL_NET_PLUGIN_SYMBOL_V5 "ncclNetPlugin_v5"

NCCOM_NET_ASSERT(sizeof(ncclNet_v5_t) == 168, net_v5_size);
NCCOM_NET_ASSERT(offsetof(ncclNet_v5_t, devices) == 16, net_v5_devices);
NCCOM_NET_ASSERT(offsetof(ncclNet_v5_t, getProperties) == 24, net_v5_props);
NCCOM_NET_ASSERT(offsetof(ncclNet_v5_t, iread) == 160, net_v5_iread);

#ifdef __cplusplus
}
#endif

#endif /* NCCOM_NET_V5_H */
