/* The loopback as a Neuron ncclNet_v5 plugin: v6 without fini. */
#include "loopback.h"

#include <nccom/net_v5.h>

static ncclResult_t listen5(int dev, void* handle, void** listen_comm) {
  return lb_listen(dev, handle, NCCL_NET_HANDLE_MAXSIZE, listen_comm);
}
static ncclResult_t connect5(int dev, void* handle, void** send_comm) {
  return lb_connect(dev, handle, 0, send_comm);
}
static ncclResult_t accept5(void* listen_comm, void** recv_comm) {
  return lb_accept(listen_comm, 0, recv_comm);
}
static ncclResult_t isend5(void* send_comm, void* data, int size, int tag, void* mhandle,
                           void** request) {
  (void)mhandle;
  return lb_isend(send_comm, data, size, tag, request);
}
static ncclResult_t irecv5(void* recv_comm, int n, void** data, int* sizes, int* tags,
                           void** mhandles, void** request) {
  (void)mhandles;
  return lb_irecv(recv_comm, n, data, sizes, tags, request);
}
static ncclResult_t iflush5(void* recv_comm, int n, void** data, int* sizes, void** mhandles,
                            void** request) {
  (void)data;
  (void)sizes;
  (void)mhandles;
  return lb_iflush(recv_comm, n, request);
}

LB_EXPORT const ncclNet_v5_t ncclNetPlugin_v5 = {
    .name = LB_NAME,
    .init = lb_init,
    .devices = lb_devices,
    .getProperties = lb_properties,
    .listen = listen5,
    .connect = connect5,
    .accept = accept5,
    .regMr = lb_reg_mr,
    .regMrDmaBuf = NULL,
    .deregMr = lb_dereg_mr,
    .isend = isend5,
    .irecv = irecv5,
    .iflush = iflush5,
    .test = lb_test,
    .closeSend = lb_close_send,
    .closeRecv = lb_close_recv,
    .closeListen = lb_close_listen,
};
