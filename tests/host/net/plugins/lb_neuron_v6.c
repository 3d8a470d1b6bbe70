/* The loopback as a Neuron ncclNet_v6 plugin (fini, regMrDmaBuf and iflush
 * present; no RMA). Broken variants for the loader tests:
 *   LB_NULL_SLOT     irecv (mandatory) is NULL
 *   LB_NULL_NAME     the name field is NULL
 *   LB_GARBAGE_SLOT  getMrKey points at address 0x10
 *   LB_LONG_TABLE_NAME  the name field is 512 letters without a NUL */
#include "loopback.h"

#include <stdint.h>

static ncclResult_t listen6(int dev, void* handle, void** listen_comm) {
  return lb_listen(dev, handle, NCCL_NET_HANDLE_MAXSIZE, listen_comm);
}
static ncclResult_t connect6(int dev, void* handle, void** send_comm) {
  return lb_connect(dev, handle, 0, send_comm);
}
static ncclResult_t accept6(void* listen_comm, void** recv_comm) {
  return lb_accept(listen_comm, 0, recv_comm);
}
static ncclResult_t reg_mr_dma_buf6(void* comm, void* data, size_t size, int type, uint64_t offset,
                                    int fd, void** mhandle) {
  (void)offset;
  (void)fd;
  return lb_reg_mr(comm, data, size, type, mhandle);
}
static ncclResult_t isend6(void* send_comm, void* data, int size, int tag, void* mhandle,
                           void** request) {
  (void)mhandle;
  return lb_isend(send_comm, data, size, tag, request);
}
__attribute__((unused)) static ncclResult_t irecv6(void* recv_comm, int n, void** data, int* sizes,
                                                   int* tags, void** mhandles, void** request) {
  (void)mhandles;
  return lb_irecv(recv_comm, n, data, sizes, tags, request);
}
static ncclResult_t iflush6(void* recv_comm, int n, void** data, int* sizes, void** mhandles,
                            void** request) {
  (void)data;
  (void)sizes;
  (void)mhandles;
  return lb_iflush(recv_comm, n, request);
}

#ifdef LB_LONG_TABLE_NAME
static const char lb_long_table_name[512] = {[0 ... 511] = 't'};
#endif

LB_EXPORT const ncclNet_v6_t ncclNetPlugin_v6 = {
#ifdef LB_NULL_NAME
    .name = NULL,
#elif defined(LB_LONG_TABLE_NAME)
    .name = lb_long_table_name,
#else
    .name = LB_NAME,
#endif
    .init = lb_init,
    .fini = lb_fini,
    .devices = lb_devices,
    .getProperties = lb_properties,
    .listen = listen6,
    .connect = connect6,
    .accept = accept6,
    .regMr = lb_reg_mr,
    .regMrDmaBuf = reg_mr_dma_buf6,
    .deregMr = lb_dereg_mr,
    .isend = isend6,
#ifdef LB_NULL_SLOT
    .irecv = NULL,
#else
    .irecv = irecv6,
#endif
    .iflush = iflush6,
    .test = lb_test,
    .closeSend = lb_close_send,
    .closeRecv = lb_close_recv,
    .closeListen = lb_close_listen,
#ifdef LB_GARBAGE_SLOT
    .getMrKey = (ncclResult_t(*)(void*, uint64_t*))(uintptr_t)0x10,
#else
    .getMrKey = NULL,
#endif
    .iwrite = NULL,
    .iwriteInline = NULL,
    .iread = NULL,
};
