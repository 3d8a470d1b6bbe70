// The upstream NVIDIA ncclNet_v4/v5/v6 tables, declared
// here only so the host can adapt a plugin built against NVIDIA's headers when
// net.plugin_layout = "nvidia" says so. Host-private on purpose: nccom's SDK
// defines the Neuron layouts, and a third party must never build a "v6" from
// these by accident.
//
// The symbol names are the same as the Neuron ones (ncclNetPlugin_v4/_v5/_v6)
// but the slot orders differ from v5 on: NVIDIA v5/v6 have no fini and no RMA
// tail, NVIDIA v6 puts regMrDmaBuf at slot 8, and regMr takes an int size in
// every NVIDIA version. Only the v4 tables coincide (apart from regMr's size).
#pragma once

#include <nccom/net_common.h>
#include <nccom/net_v4.h>

#include <cstddef>
#include <cstdint>

namespace nccom::net::nvidia {

// The names below are NVIDIA's (structs, slots and their parameters), so a
// reader can hold them against upstream's headers.
// NOLINTBEGIN(readability-identifier-naming)

// NVIDIA v4 properties are the Neuron v4 properties (40 bytes).
using Properties_v4 = ncclNetProperties_v4_t;

// NVIDIA v5 and v6 share this 48-byte struct: no regIsGlobal, no RMA fields.
struct Properties_v6 {
  char* name;      //  0
  char* pciPath;   //  8
  uint64_t guid;   // 16
  int ptrSupport;  // 24
  int speed;       // 28 Mbps
  int port;        // 32
  float latency;   // 36
  int maxComms;    // 40
  int maxRecvs;    // 44
};
using Properties_v5 = Properties_v6;

// 16 slots, 128 bytes: the Neuron v4 table with regMr(int size).
struct Net_v4 {
  const char* name;
  ncclResult_t (*init)(ncclDebugLogger_t logFunction);
  ncclResult_t (*devices)(int* ndev);
  ncclResult_t (*getProperties)(int dev, Properties_v4* props);
  ncclResult_t (*listen)(int dev, void* handle, void** listenComm);
  ncclResult_t (*connect)(int dev, void* handle, void** sendComm);
  ncclResult_t (*accept)(void* listenComm, void** recvComm);
  ncclResult_t (*regMr)(void* comm, void* data, int size, int type, void** mhandle);
  ncclResult_t (*deregMr)(void* comm, void* mhandle);
  ncclResult_t (*isend)(void* sendComm, void* data, int size, void* mhandle, void** request);
  ncclResult_t (*irecv)(void* recvComm, void* data, int size, void* mhandle, void** request);
  ncclResult_t (*iflush)(void* recvComm, void* data, int size, void* mhandle, void** request);
  ncclResult_t (*test)(void* request, int* done, int* size);
  ncclResult_t (*closeSend)(void* sendComm);
  ncclResult_t (*closeRecv)(void* recvComm);
  ncclResult_t (*closeListen)(void* listenComm);
};

// 16 slots, 128 bytes: tags, multi-receive, test returns sizes.
struct Net_v5 {
  const char* name;
  ncclResult_t (*init)(ncclDebugLogger_t logFunction);
  ncclResult_t (*devices)(int* ndev);
  ncclResult_t (*getProperties)(int dev, Properties_v5* props);
  ncclResult_t (*listen)(int dev, void* handle, void** listenComm);
  ncclResult_t (*connect)(int dev, void* handle, void** sendComm);
  ncclResult_t (*accept)(void* listenComm, void** recvComm);
  ncclResult_t (*regMr)(void* comm, void* data, int size, int type, void** mhandle);
  ncclResult_t (*deregMr)(void* comm, void* mhandle);
  ncclResult_t (*isend)(void* sendComm, void* data, int size, int tag, void* mhandle,
                        void** request);
  ncclResult_t (*irecv)(void* recvComm, int n, void** data, int* sizes, int* tags, void** mhandles,
                        void** request);
  ncclResult_t (*iflush)(void* recvComm, int n, void** data, int* sizes, void** mhandles,
                         void** request);
  ncclResult_t (*test)(void* request, int* done, int* sizes);
  ncclResult_t (*closeSend)(void* sendComm);
  ncclResult_t (*closeRecv)(void* recvComm);
  ncclResult_t (*closeListen)(void* listenComm);
};

// 17 slots, 136 bytes: NVIDIA v5 plus regMrDmaBuf after regMr.
struct Net_v6 {
  const char* name;
  ncclResult_t (*init)(ncclDebugLogger_t logFunction);
  ncclResult_t (*devices)(int* ndev);
  ncclResult_t (*getProperties)(int dev, Properties_v6* props);
  ncclResult_t (*listen)(int dev, void* handle, void** listenComm);
  ncclResult_t (*connect)(int dev, void* handle, void** sendComm);
  ncclResult_t (*accept)(void* listenComm, void** recvComm);
  ncclResult_t (*regMr)(void* comm, void* data, int size, int type, void** mhandle);
  ncclResult_t (*regMrDmaBuf)(void* comm, void* data, size_t size, int type, uint64_t offset,
                              int fd, void** mhandle);
  ncclResult_t (*deregMr)(void* comm, void* mhandle);
  ncclResult_t (*isend)(void* sendComm, void* data, int size, int tag, void* mhandle,
                        void** request);
  ncclResult_t (*irecv)(void* recvComm, int n, void** data, int* sizes, int* tags, void** mhandles,
                        void** request);
  ncclResult_t (*iflush)(void* recvComm, int n, void** data, int* sizes, void** mhandles,
                         void** request);
  ncclResult_t (*test)(void* request, int* done, int* sizes);
  ncclResult_t (*closeSend)(void* sendComm);
  ncclResult_t (*closeRecv)(void* recvComm);
  ncclResult_t (*closeListen)(void* listenComm);
};

static_assert(sizeof(Properties_v6) == 48, "NVIDIA ncclNetProperties_v6_t is 48 bytes");
static_assert(offsetof(Properties_v6, ptrSupport) == 24);
static_assert(offsetof(Properties_v6, speed) == 28);
static_assert(offsetof(Properties_v6, latency) == 36);
static_assert(offsetof(Properties_v6, maxComms) == 40);
static_assert(offsetof(Properties_v6, maxRecvs) == 44);

static_assert(sizeof(Net_v4) == 128, "NVIDIA ncclNet_v4_t has 16 slots");
static_assert(offsetof(Net_v4, regMr) == 56);
static_assert(offsetof(Net_v4, closeListen) == 120);

static_assert(sizeof(Net_v5) == 128, "NVIDIA ncclNet_v5_t has 16 slots");
static_assert(offsetof(Net_v5, devices) == 16);
static_assert(offsetof(Net_v5, isend) == 72);
static_assert(offsetof(Net_v5, test) == 96);
static_assert(offsetof(Net_v5, closeListen) == 120);

static_assert(sizeof(Net_v6) == 136, "NVIDIA ncclNet_v6_t has 17 slots");
static_assert(offsetof(Net_v6, devices) == 16);
static_assert(offsetof(Net_v6, regMrDmaBuf) == 64);
static_assert(offsetof(Net_v6, deregMr) == 72);
static_assert(offsetof(Net_v6, test) == 104);
static_assert(offsetof(Net_v6, closeListen) == 128);
// NOLINTEND(readability-identifier-naming)

}  // namespace nccom::net::nvidia
