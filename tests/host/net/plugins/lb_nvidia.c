/* The loopback as an NVIDIA-layout plugin. Exactly one of LB_NV_V4, LB_NV_V5,
 * LB_NV_V6 selects which table (ncclNetPlugin_v4/_v5/_v6) it exports. */
#include "loopback.h"
#include "nvidia_tables.h"

static ncclResult_t reg_mr_int(void* comm, void* data, int size, int type, void** mhandle) {
  if (size < 0) return ncclInvalidArgument;
  return lb_reg_mr(comm, data, (size_t)size, type, mhandle);
}

#if defined(LB_NV_V4)
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
static ncclResult_t listen4(int dev, void* handle, void** lc) {
  return lb_listen(dev, handle, NCCL_NET_HANDLE_MAXSIZE_V4, lc);
}
static ncclResult_t connect4(int dev, void* handle, void** sc) {
  return lb_connect(dev, handle, 1, sc);
}
static ncclResult_t accept4(void* lc, void** rc) { return lb_accept(lc, 1, rc); }
static ncclResult_t isend4(void* sc, void* data, int size, void* mh, void** req) {
  (void)mh;
  return lb_isend(sc, data, size, 0, req);
}
static ncclResult_t irecv4(void* rc, void* data, int size, void* mh, void** req) {
  (void)mh;
  return lb_irecv(rc, 1, &data, &size, NULL, req);
}
static ncclResult_t iflush4(void* rc, void* data, int size, void* mh, void** req) {
  (void)data;
  (void)size;
  (void)mh;
  return lb_iflush(rc, 1, req);
}
LB_EXPORT const nv_net_v4_t ncclNetPlugin_v4 = {
    LB_NAME, lb_init,       lb_devices,    properties4,    listen4, connect4,
    accept4, reg_mr_int,    lb_dereg_mr,   isend4,         irecv4,  iflush4,
    lb_test, lb_close_send, lb_close_recv, lb_close_listen};

#else
static ncclResult_t properties6(int dev, nv_properties_v6_t* props) {
  ncclNetProperties_v6_t wide;
  ncclResult_t r = lb_properties(dev, &wide);
  if (r != ncclSuccess) return r;
  props->name = wide.name;
  props->pciPath = wide.pciPath;
  props->guid = wide.guid;
  props->ptrSupport = wide.ptrSupport;
  props->speed = wide.speed;
  props->port = wide.port;
  props->latency = wide.latency;
  props->maxComms = wide.maxComms;
  props->maxRecvs = wide.maxRecvs;
  return ncclSuccess;
}
static ncclResult_t listen6(int dev, void* handle, void** lc) {
  return lb_listen(dev, handle, NCCL_NET_HANDLE_MAXSIZE, lc);
}
static ncclResult_t connect6(int dev, void* handle, void** sc) {
  return lb_connect(dev, handle, 0, sc);
}
static ncclResult_t accept6(void* lc, void** rc) { return lb_accept(lc, 0, rc); }
static ncclResult_t isend6(void* sc, void* data, int size, int tag, void* mh, void** req) {
  (void)mh;
  return lb_isend(sc, data, size, tag, req);
}
static ncclResult_t irecv6(void* rc, int n, void** data, int* sizes, int* tags, void** mh,
                           void** req) {
  (void)mh;
  return lb_irecv(rc, n, data, sizes, tags, req);
}
static ncclResult_t iflush6(void* rc, int n, void** data, int* sizes, void** mh, void** req) {
  (void)data;
  (void)sizes;
  (void)mh;
  return lb_iflush(rc, n, req);
}
#if defined(LB_NV_V6)
static ncclResult_t reg_mr_dma_buf(void* comm, void* data, size_t size, int type, uint64_t offset,
                                   int fd, void** mhandle) {
  (void)offset;
  (void)fd;
  return lb_reg_mr(comm, data, size, type, mhandle);
}
LB_EXPORT const nv_net_v6_t ncclNetPlugin_v6 = {
    LB_NAME, lb_init,    lb_devices,     properties6,   listen6,        connect6,
    accept6, reg_mr_int, reg_mr_dma_buf, lb_dereg_mr,   isend6,         irecv6,
    iflush6, lb_test,    lb_close_send,  lb_close_recv, lb_close_listen};
#else
LB_EXPORT const nv_net_v5_t ncclNetPlugin_v5 = {
    LB_NAME, lb_init,       lb_devices,    properties6,    listen6, connect6,
    accept6, reg_mr_int,    lb_dereg_mr,   isend6,         irecv6,  iflush6,
    lb_test, lb_close_send, lb_close_recv, lb_close_listen};
#endif
#endif
