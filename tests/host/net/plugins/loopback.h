/* An in-memory loopback network for the net_host tests: every comm lives in
 * this process, a send is queued on its channel and a matching receive
 * copies it out. One core (loopback.c), wrapped by one table file per ABI
 * version and layout (lb_*.c), so each test plugin exports exactly the
 * tables its file defines.
 *
 * Build-time switches (compile definitions):
 *   LB_NAME="x"      the table's name field (default "loopback")
 *   LB_NDEV=n        devices() reports n (default 1; 0 for "no devices")
 *   LB_INIT_FAILS    init returns ncclInternalError
 *   LB_WILD_PROPS    getProperties fills the whole struct with 0xff (wild
 *                    string pointers, every count -1)
 *   LB_LONG_STRINGS  getProperties' name and pciPath are not NUL-terminated
 *                    (512 and 8192 bytes of letters, then whatever follows)
 *   LB_MAX_RECVS=n   getProperties reports maxRecvs n (default 1)
 * Connect/accept are non-blocking for v5/v6 tables (the first connect to a
 * listener answers NULL, accept answers NULL until a connect is pending) and
 * complete at once for v4 tables. */
#ifndef NET_HOST_LOOPBACK_H
#define NET_HOST_LOOPBACK_H

#include <nccom/net_v6.h>

#define LB_EXPORT __attribute__((visibility("default")))

#ifndef LB_NAME
#define LB_NAME "loopback"
#endif

/* Read by the tests through dlsym. */
typedef struct {
  int init_calls;
  int fini_calls;
  int open_comms; /* listen + send + recv comms not closed yet */
  int open_mrs;
  int max_recv_n; /* largest n an irecv was called with */
  int last_tag;   /* tag of the last isend */
} lb_stats_t;
extern LB_EXPORT lb_stats_t loopback_stats;

ncclResult_t lb_init(ncclDebugLogger_t log);
ncclResult_t lb_fini(void);
ncclResult_t lb_devices(int* ndev);
/* Fills the v6 properties; the v4 and NVIDIA wrappers narrow them. */
ncclResult_t lb_properties(int dev, ncclNetProperties_v6_t* props);
/* Writes the handle's first `handle_bytes` bytes (16 of them meaningful). */
ncclResult_t lb_listen(int dev, void* handle, int handle_bytes, void** listen_comm);
ncclResult_t lb_connect(int dev, const void* handle, int blocking, void** send_comm);
ncclResult_t lb_accept(void* listen_comm, int blocking, void** recv_comm);
ncclResult_t lb_reg_mr(void* comm, void* data, size_t size, int type, void** mhandle);
ncclResult_t lb_dereg_mr(void* comm, void* mhandle);
ncclResult_t lb_isend(void* send_comm, void* data, int size, int tag, void** request);
ncclResult_t lb_irecv(void* recv_comm, int n, void** data, int* sizes, int* tags, void** request);
ncclResult_t lb_iflush(void* recv_comm, int n, void** request);
ncclResult_t lb_test(void* request, int* done, int* sizes);
ncclResult_t lb_close_send(void* send_comm);
ncclResult_t lb_close_recv(void* recv_comm);
ncclResult_t lb_close_listen(void* listen_comm);

#endif
