// The ABI surface: ncclNetPlugin_v6 / _v5 / _v4 (Neuron layouts). Each slot
// validates what the caller handed in and forwards to the objects in
// socket_setup.h / socket_comm.h; whatever can throw runs in the SDK's guard
// (nccom/util/boundary.h), so no C++ exception crosses the boundary. Only the
// three tables and nccomNetConfig (socket_config.cc) are exported.
#include "socket_comm.h"
#include "socket_config.h"
#include "socket_devices.h"
#include "socket_log.h"
#include "socket_setup.h"

#include <nccom/net_v4.h>
#include <nccom/net_v5.h>
#include <nccom/net_v6.h>
#include <nccom/util/boundary.h>

#include <utility>

namespace {

using namespace nccom::socket;

// A caught exception is logged as "NET/Socket : <slot>: <what>", like every
// other line of the plugin.
template <typename F>
ncclResult_t guarded(const char* slot, F&& body) noexcept {
  return nccom::util::guarded_net(SOCK_TAG, slot, std::forward<F>(body));
}

bool initialized(const char* slot) {
  if (devices_initialized()) return true;
  SOCK_WARN("%s: the plugin has not been initialized", slot);
  return false;
}

bool mhandle_ok(void* mhandle) {
  return mhandle == nullptr || static_cast<MemRegion*>(mhandle)->marker == kMemRegionMarker;
}

ncclResult_t unsupported(const char* slot) {
  SOCK_WARN("%s: not supported (rma_supported = 0, no device memory over TCP)", slot);
  return ncclInvalidUsage;
}

// ---- control plane ----------------------------------------------------------

ncclResult_t sock_init(ncclDebugLogger_t logger) {
  nccom::util::set_logger(logger);
  // The configuration in force, as set through nccomNetConfig (or the
  // defaults): lets the host's log show what the plugin actually took.
  SocketConfig config = current_config();
  SOCK_INFO("init: nsocks_per_thread %d, nthreads %d, interfaces \"%s\"", config.nsocks_per_thread,
            config.nthreads, config.ifnames.c_str());
  return guarded("init", [] { return devices_init(); });
}

ncclResult_t sock_fini() {
  connectors_fini();
  devices_fini();
  return ncclSuccess;
}

ncclResult_t sock_devices(int* ndev) {
  if (ndev == nullptr) return ncclInvalidArgument;
  if (!initialized("devices")) return ncclInternalError;
  *ndev = device_count();
  return ncclSuccess;
}

ncclResult_t sock_get_properties(int dev, ncclNetProperties_v6_t* props) {
  if (!initialized("getProperties")) return ncclInternalError;
  return device_properties(dev, props);
}

ncclResult_t sock_get_properties_v4(int dev, ncclNetProperties_v4_t* props) {
  ncclNetProperties_v6_t p;
  if (props == nullptr) return ncclInvalidArgument;
  if (ncclResult_t rc = sock_get_properties(dev, &p); rc != ncclSuccess) return rc;
  *props =
      ncclNetProperties_v4_t{p.name, p.pciPath, p.guid, p.ptrSupport, p.speed, p.port, p.maxComms};
  return ncclSuccess;
}

ncclResult_t sock_listen(int dev, void* handle, void** listen_comm) {
  if (handle == nullptr || listen_comm == nullptr) return ncclInvalidArgument;
  if (!initialized("listen")) return ncclInternalError;
  return guarded("listen", [&] {
    ListenComm* l = nullptr;
    ncclResult_t rc = ListenComm::create(dev, handle, &l);
    if (rc == ncclSuccess) *listen_comm = l;
    return rc;
  });
}

bool connect_args_ok(int dev, void* handle, void** send_comm) {
  if (handle != nullptr && send_comm != nullptr && dev >= 0 && dev < device_count()) return true;
  SOCK_WARN("connect: bad arguments (dev %d, handle %p, sendComm %p)", dev, handle,
            static_cast<void*>(send_comm));
  return false;
}

ncclResult_t sock_connect(int dev, void* handle, void** send_comm) {
  if (!initialized("connect")) return ncclInternalError;
  if (!connect_args_ok(dev, handle, send_comm)) return ncclInvalidArgument;
  return guarded("connect", [&] {
    SendComm* c = nullptr;
    ncclResult_t rc = connect_nonblocking(handle, &c);
    if (rc == ncclSuccess) *send_comm = c != nullptr ? c->handle() : nullptr;
    return rc;
  });
}

ncclResult_t sock_connect_v4(int dev, void* handle, void** send_comm) {
  if (!initialized("connect")) return ncclInternalError;
  if (!connect_args_ok(dev, handle, send_comm)) return ncclInvalidArgument;
  return guarded("connect", [&] {
    SendComm* c = nullptr;
    ncclResult_t rc = connect_blocking(handle, &c);
    if (rc == ncclSuccess) *send_comm = c->handle();
    return rc;
  });
}

template <bool kBlocking>
ncclResult_t sock_accept(void* listen_comm, void** recv_comm) {
  ListenComm* l = ListenComm::from_handle(listen_comm);
  if (l == nullptr || recv_comm == nullptr) {
    SOCK_WARN("accept: not a listen comm (%p) or NULL recvComm", listen_comm);
    return ncclInvalidArgument;
  }
  return guarded("accept", [&] {
    RecvComm* c = nullptr;
    ncclResult_t rc = kBlocking ? l->accept_blocking(&c) : l->accept(&c);
    if (rc == ncclSuccess) *recv_comm = c != nullptr ? c->handle() : nullptr;
    return rc;
  });
}

ncclResult_t sock_close_listen(void* listen_comm) {
  ListenComm* l = ListenComm::from_handle(listen_comm);
  if (l == nullptr) return ncclInvalidArgument;
  delete l;
  return ncclSuccess;
}

ncclResult_t sock_close_send(void* send_comm) {
  Comm* c = Comm::from_handle(send_comm, kSendCommMarker);
  if (c == nullptr) return ncclInvalidArgument;
  delete c;
  return ncclSuccess;
}

ncclResult_t sock_close_recv(void* recv_comm) {
  Comm* c = Comm::from_handle(recv_comm, kRecvCommMarker);
  if (c == nullptr) return ncclInvalidArgument;
  delete c;
  return ncclSuccess;
}

// ---- registration -----------------------------------------------------------

ncclResult_t sock_reg_mr(void* comm, void* data, size_t size, int type, void** mhandle) {
  bool comm_ok = Comm::from_handle(comm, kSendCommMarker) != nullptr ||
                 Comm::from_handle(comm, kRecvCommMarker) != nullptr;
  if (!comm_ok || mhandle == nullptr) return ncclInvalidArgument;
  if (type != NCCL_PTR_HOST) {
    SOCK_WARN("regMr: memory type 0x%x not supported (host memory only)", type);
    return ncclInvalidArgument;
  }
  return guarded("regMr", [&] {
    *mhandle = new MemRegion{kMemRegionMarker, data, size};
    return ncclSuccess;
  });
}

ncclResult_t sock_reg_mr_dmabuf(void*, void*, size_t, int, uint64_t, int, void**) {
  return unsupported("regMrDmaBuf");
}

ncclResult_t sock_dereg_mr(void* comm, void* mhandle) {
  auto* mr = static_cast<MemRegion*>(mhandle);
  if (mr == nullptr || mr->marker != kMemRegionMarker) return ncclInvalidArgument;
  mr->marker = 0;
  delete mr;
  return ncclSuccess;
}

// ---- data path ----------------------------------------------------------------

ncclResult_t sock_isend(void* send_comm, void* data, int size, int tag, void* mhandle,
                        void** request) {
  auto* c = static_cast<SendComm*>(Comm::from_handle(send_comm, kSendCommMarker));
  if (c == nullptr || !mhandle_ok(mhandle)) return ncclInvalidArgument;
  return guarded("isend", [&] { return c->isend(data, size, tag, request); });
}

ncclResult_t sock_isend_v4(void* send_comm, void* data, int size, void* mhandle, void** request) {
  return sock_isend(send_comm, data, size, 0, mhandle, request);
}

ncclResult_t sock_irecv(void* recv_comm, int n, void** data, int* sizes, int* tags, void** mhandles,
                        void** request) {
  auto* c = static_cast<RecvComm*>(Comm::from_handle(recv_comm, kRecvCommMarker));
  if (c == nullptr || n != 1 || data == nullptr || sizes == nullptr ||
      (mhandles != nullptr && !mhandle_ok(mhandles[0]))) {
    SOCK_WARN("irecv: bad arguments (comm %p, n %d; only n == 1 is supported)", recv_comm, n);
    return ncclInvalidArgument;
  }
  int tag = tags != nullptr ? tags[0] : 0;
  return guarded("irecv", [&] { return c->irecv(data[0], sizes[0], tag, request); });
}

ncclResult_t sock_irecv_v4(void* recv_comm, void* data, int size, void* mhandle, void** request) {
  return sock_irecv(recv_comm, 1, &data, &size, nullptr, &mhandle, request);
}

ncclResult_t sock_iflush(void* recv_comm, int n, void** data, int* sizes, void** mhandles,
                         void** request) {
  auto* c = static_cast<RecvComm*>(Comm::from_handle(recv_comm, kRecvCommMarker));
  if (c == nullptr || n != 1) return ncclInvalidArgument;
  return c->iflush(request);
}

ncclResult_t sock_iflush_v4(void* recv_comm, void* data, int size, void* mhandle, void** request) {
  return sock_iflush(recv_comm, 1, &data, &size, &mhandle, request);
}

ncclResult_t sock_test(void* request, int* done, int* sizes) {
  Request* req = Comm::request_from_handle(request);
  if (req == nullptr) return ncclInvalidArgument;
  return guarded("test", [&] { return req->comm->test(req, done, sizes); });
}

// ---- RMA: not over TCP -------------------------------------------------------

ncclResult_t sock_get_mr_key(void*, uint64_t*) { return unsupported("getMrKey"); }
ncclResult_t sock_iwrite(void*, void*, size_t, void*, uint64_t, uint64_t, void**) {
  return unsupported("iwrite");
}
ncclResult_t sock_iwrite_inline(void*, void*, size_t, uint64_t, uint64_t, void**) {
  return unsupported("iwriteInline");
}
ncclResult_t sock_iread(void*, void*, size_t, void*, uint64_t, uint64_t, void**) {
  return unsupported("iread");
}

}  // namespace

#define NCCOM_SOCKET_EXPORT extern "C" __attribute__((visibility("default")))

// clang-format off
NCCOM_SOCKET_EXPORT const ncclNet_v6_t ncclNetPlugin_v6 = {
    .name = "Socket",
    .init = sock_init,
    .fini = sock_fini,
    .devices = sock_devices,
    .getProperties = sock_get_properties,
    .listen = sock_listen,
    .connect = sock_connect,
    .accept = sock_accept<false>,
    .regMr = sock_reg_mr,
    .regMrDmaBuf = sock_reg_mr_dmabuf,
    .deregMr = sock_dereg_mr,
    .isend = sock_isend,
    .irecv = sock_irecv,
    .iflush = sock_iflush,
    .test = sock_test,
    .closeSend = sock_close_send,
    .closeRecv = sock_close_recv,
    .closeListen = sock_close_listen,
    .getMrKey = sock_get_mr_key,
    .iwrite = sock_iwrite,
    .iwriteInline = sock_iwrite_inline,
    .iread = sock_iread,
};

// v5: v6 without fini. No process-exit finalizer is registered: the only
// global state is the device list, released when the library is unloaded.
NCCOM_SOCKET_EXPORT const ncclNet_v5_t ncclNetPlugin_v5 = {
    .name = "Socket",
    .init = sock_init,
    .devices = sock_devices,
    .getProperties = sock_get_properties,
    .listen = sock_listen,
    .connect = sock_connect,
    .accept = sock_accept<false>,
    .regMr = sock_reg_mr,
    .regMrDmaBuf = sock_reg_mr_dmabuf,
    .deregMr = sock_dereg_mr,
    .isend = sock_isend,
    .irecv = sock_irecv,
    .iflush = sock_iflush,
    .test = sock_test,
    .closeSend = sock_close_send,
    .closeRecv = sock_close_recv,
    .closeListen = sock_close_listen,
    .getMrKey = sock_get_mr_key,
    .iwrite = sock_iwrite,
    .iwriteInline = sock_iwrite_inline,
    .iread = sock_iread,
};

// v4: blocking connect/accept (30 s bound), single-buffer receive and flush,
// no tags (tag 0), 40-byte properties.
NCCOM_SOCKET_EXPORT const ncclNet_v4_t ncclNetPlugin_v4 = {
    .name = "Socket",
    .init = sock_init,
    .devices = sock_devices,
    .getProperties = sock_get_properties_v4,
    .listen = sock_listen,
    .connect = sock_connect_v4,
    .accept = sock_accept<true>,
    .regMr = sock_reg_mr,
    .deregMr = sock_dereg_mr,
    .isend = sock_isend_v4,
    .irecv = sock_irecv_v4,
    .iflush = sock_iflush_v4,
    .test = sock_test,
    .closeSend = sock_close_send,
    .closeRecv = sock_close_recv,
    .closeListen = sock_close_listen,
};
// clang-format on
