/* The upstream NVIDIA ncclNet_v4/v5/v6 tables as a plugin built against
 * NVIDIA's headers sees them (the host's copy is host/net/nvidia_layouts.h;
 * this one is deliberately separate: a plugin includes no host header). */
#ifndef NET_HOST_NVIDIA_TABLES_H
#define NET_HOST_NVIDIA_TABLES_H

#include <nccom/net_v4.h>

typedef struct {
  char* name;
  char* pciPath;
  uint64_t guid;
  int ptrSupport;
  int speed;
  int port;
  float latency;
  int maxComms;
  int maxRecvs;
} nv_properties_v6_t;

typedef struct {
  const char* name;
  ncclResult_t (*init)(ncclDebugLogger_t);
  ncclResult_t (*devices)(int*);
  ncclResult_t (*getProperties)(int, ncclNetProperties_v4_t*);
  ncclResult_t (*listen)(int, void*, void**);
  ncclResult_t (*connect)(int, void*, void**);
  ncclResult_t (*accept)(void*, void**);
  ncclResult_t (*regMr)(void*, void*, int, int, void**);
  ncclResult_t (*deregMr)(void*, void*);
  ncclResult_t (*isend)(void*, void*, int, void*, void**);
  ncclResult_t (*irecv)(void*, void*, int, void*, void**);
  ncclResult_t (*iflush)(void*, void*, int, void*, void**);
  ncclResult_t (*test)(void*, int*, int*);
  ncclResult_t (*closeSend)(void*);
  ncclResult_t (*closeRecv)(void*);
  ncclResult_t (*closeListen)(void*);
} nv_net_v4_t;

/* NV_NET_V56: the 16 slots NVIDIA v5 and v6 share, with `extra` (v6:
 * regMrDmaBuf) after regMr. */
#define NV_NET_V56(extra)                                                  \
  struct {                                                                 \
    const char* name;                                                      \
    ncclResult_t (*init)(ncclDebugLogger_t);                               \
    ncclResult_t (*devices)(int*);                                         \
    ncclResult_t (*getProperties)(int, nv_properties_v6_t*);               \
    ncclResult_t (*listen)(int, void*, void**);                            \
    ncclResult_t (*connect)(int, void*, void**);                           \
    ncclResult_t (*accept)(void*, void**);                                 \
    ncclResult_t (*regMr)(void*, void*, int, int, void**);                 \
    extra ncclResult_t (*deregMr)(void*, void*);                           \
    ncclResult_t (*isend)(void*, void*, int, int, void*, void**);          \
    ncclResult_t (*irecv)(void*, int, void**, int*, int*, void**, void**); \
    ncclResult_t (*iflush)(void*, int, void**, int*, void**, void**);      \
    ncclResult_t (*test)(void*, int*, int*);                               \
    ncclResult_t (*closeSend)(void*);                                      \
    ncclResult_t (*closeRecv)(void*);                                      \
    ncclResult_t (*closeListen)(void*);                                    \
  }

typedef NV_NET_V56() nv_net_v5_t;
typedef NV_NET_V56(ncclResult_t (*regMrDmaBuf)(void*, void*, size_t, int, uint64_t, int,
                                               void**);) nv_net_v6_t;

#endif
