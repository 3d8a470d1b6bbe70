/* The loopback as a Neuron ncclNet_v4 plugin: 64-byte handles (listen fills
 * all 64), blocking connect/accept, single-buffer irecv/iflush, no tags,
 * 40-byte properties. LB_V4_SYMBOL renames the exported table (the "wrong
 * struct" variant exports this v4 table as ncclNetPlugin_v6). */
#include "loopback.h"

#include <nccom/net_v4.h>

#ifndef LB_V4_SYMBOL
#define LB_V4_SYMBOL ncclNetPlugin_v4
#endif

static ncclResult_t properties4(int dev, ncclNetProperties_v4_t* props) {
  ncclNetProperties_v6_t wide;
  ncclResult_t r = lb_properties(dev, &wide);
  if (r != ncclSuccess) return r;
  props->name = wide.name;
  props->pciPath = wide.pciPath;
  props->guid = wide.guid;
  props->ptrSupport = wide.ptrSupport;
  props->speed = wide.speed;
  props->port = wide.port;
  props->maxComms = wide.maxComms;
  return ncclSuccess;
}
static ncclResult_t listen4(int dev, void* handle, void** listen_comm) {
  return lb_listen(dev, handle, NCCL_NET_HANDLE_MAXSIZE_V4, listen_comm);
}
static ncclResult_t connect4(int dev, void* handle, void** send_comm) {
  return lb_connect(dev, handle, 1, send_comm);
}
static ncclResult_t accept4(void* listen_comm, void** recv_comm) {
  return lb_accept(listen_comm, 1, recv_comm);
}
static ncclResult_t isend4(void* send_comm, void* data, int size, void* mhandle, void** request) {
  (void)mhandle;
  return lb_isend(send_comm, data, size, 0, request);
}
static ncclResult_t irecv4(void* recv_comm, void* data, int size, void* mhandle, void** request) {
  (void)mhandle;
  return lb_irecv(recv_comm, 1, &data, &size, NULL, request);
}
static ncclResult_t iflush4(void* recv_comm, void* data, int size, void* mhandle, void** request) {
  (void)data;
  (void)size;
  (void)mhandle;
  return lb_iflush(recv_comm, 1, request);
}

LB_EXPORT const ncclNet_v4_t LB_V4_SYMBOL = {
    .name = LB_NAME,
    .init = lb_init,
    .devices = lb_devices,
    .getProperties = properties4,
    .listen = listen4,
    .connect = connect4,
    .accept = accept4,
    .regMr = lb_reg_mr,
    .deregMr = lb_dereg_mr,
    .isend = isend4,
    .irecv = irecv4,
    .iflush = iflush4,
    .test = lb_test,
    .closeSend = lb_close_send,
    .closeRecv = lb_close_recv,
    .closeListen = lb_close_listen,
};
