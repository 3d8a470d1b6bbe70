// The exported ABI: ncclNetPlugin_v6 (22 slots, the one libnccom binds),
// ncclNetPlugin_v5 (21) and ncclNetPlugin_v4 (16), Neuron layouts
// (sdk/include/nccom/net_v*.h); its configuration, nccomNetConfig, is in
// net_config.cc.
// Everything else in the library is hidden.
//
// Each slot is a thin shim onto Plugin in the SDK's guard
// (nccom/util/boundary.h): no C++ exception crosses the ABI.
#include "net_plugin.h"

#include <nccom/net_v4.h>
#include <nccom/net_v5.h>
#include <nccom/net_v6.h>
#include <nccom/util/boundary.h>

#include <chrono>
#include <thread>

#define NCCOM_OFI_EXPORT __attribute__((visibility("default")))

namespace nccom::ofi {
namespace {

constexpr const char* kName = "AWS Libfabric";
// The tag of the plugin's lines, and of a caught exception's "NET/OFI <slot>: ...".
constexpr const char* kWho = "NET/OFI";
// v4 connect/accept block; nothing blocks forever.
constexpr auto kV4BlockingTimeout = std::chrono::seconds(120);

// Runs one slot's body (returning a Status) counted by CallScope; a caught
// exception is a WARN (nccom/util/boundary.h).
template <class F>
ncclResult_t guarded(const char* slot, F&& body) noexcept {
  CallScope in_call;
  return nccom::util::guarded_net(kWho, slot, [&] { return body().code(); });
}

Plugin& plugin_instance() { return Plugin::instance(); }

ncclResult_t init(ncclDebugLogger_t logger) {
  return guarded("init", [&] { return plugin_instance().init(logger); });
}
ncclResult_t fini() {
  return guarded("fini", [&] { return plugin_instance().fini(); });
}
ncclResult_t devices(int* ndev) {
  return guarded("devices", [&] { return plugin_instance().devices(ndev); });
}
ncclResult_t get_properties(int dev, ncclNetProperties_v6_t* props) {
  return guarded("getProperties", [&] { return plugin_instance().get_properties(dev, props); });
}
ncclResult_t listen(int dev, void* handle, void** listen_comm) {
  return guarded("listen", [&] {
    return plugin_instance().listen(dev, handle, NCCL_NET_HANDLE_MAXSIZE, listen_comm);
  });
}
ncclResult_t connect(int dev, void* handle, void** send_comm) {
  return guarded("connect", [&] {
    return plugin_instance().connect(dev, handle, NCCL_NET_HANDLE_MAXSIZE, send_comm);
  });
}
ncclResult_t accept(void* listen_comm, void** recv_comm) {
  return guarded("accept", [&] { return plugin_instance().accept(listen_comm, recv_comm); });
}
ncclResult_t reg_mr(void* comm, void* data, size_t size, int type, void** mhandle) {
  return guarded("regMr",
                 [&] { return plugin_instance().reg_mr(comm, data, size, type, mhandle); });
}
ncclResult_t reg_mr_dma_buf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                            void** mhandle) {
  return guarded("regMrDmaBuf", [&] {
    return plugin_instance().reg_mr_dma_buf(comm, data, size, type, offset, fd, mhandle);
  });
}
ncclResult_t dereg_mr(void* comm, void* mhandle) {
  return guarded("deregMr", [&] { return plugin_instance().dereg_mr(comm, mhandle); });
}
ncclResult_t isend(void* send_comm, void* data, int size, int tag, void* mhandle, void** request) {
  return guarded("isend", [&] {
    return plugin_instance().isend(send_comm, data, size, tag, mhandle, request);
  });
}
ncclResult_t irecv(void* recv_comm, int n, void** data, int* sizes, int* tags, void** mhandles,
                   void** request) {
  return guarded("irecv", [&] {
    return plugin_instance().irecv(recv_comm, n, data, sizes, tags, mhandles, request);
  });
}
ncclResult_t iflush(void* recv_comm, int n, void** data, int* sizes, void** mhandles,
                    void** request) {
  return guarded("iflush", [&] {
    return plugin_instance().iflush(recv_comm, n, data, sizes, mhandles, request);
  });
}
ncclResult_t test(void* request, int* done, int* sizes) {
  return guarded("test", [&] { return plugin_instance().test(request, done, sizes); });
}
ncclResult_t close_send(void* comm) {
  return guarded("closeSend", [&] { return plugin_instance().close(comm, CommKind::kSend); });
}
ncclResult_t close_recv(void* comm) {
  return guarded("closeRecv", [&] { return plugin_instance().close(comm, CommKind::kRecv); });
}
ncclResult_t close_listen(void* comm) {
  return guarded("closeListen", [&] { return plugin_instance().close(comm, CommKind::kListen); });
}
ncclResult_t get_mr_key(void* mhandle, uint64_t* mr_key) {
  return guarded("getMrKey", [&] { return plugin_instance().get_mr_key(mhandle, mr_key); });
}
ncclResult_t iwrite(void* send_comm, void* src, size_t size, void* src_mhandle, uint64_t dest,
                    uint64_t mr_key, void** request) {
  return guarded("iwrite", [&] {
    return plugin_instance().iwrite(send_comm, src, size, src_mhandle, dest, mr_key, request);
  });
}
ncclResult_t iwrite_inline(void* send_comm, void* src, size_t size, uint64_t dest, uint64_t mr_key,
                           void** request) {
  return guarded("iwriteInline", [&] {
    return plugin_instance().iwrite_inline(send_comm, src, size, dest, mr_key, request);
  });
}
ncclResult_t iread(void* recv_comm, void* dest, size_t size, void* dest_mhandle, uint64_t src,
                   uint64_t mr_key, void** request) {
  return guarded("iread", [&] {
    return plugin_instance().iread(recv_comm, dest, size, dest_mhandle, src, mr_key, request);
  });
}

// ---- v4: 64-byte handles, blocking connect/accept, untagged single buffers ----
ncclResult_t get_properties_v4(int dev, ncclNetProperties_v4_t* props) {
  if (props == nullptr) return ncclInvalidArgument;
  ncclNetProperties_v6_t full{};
  ncclResult_t rc = get_properties(dev, &full);
  if (rc != ncclSuccess) return rc;
  *props = ncclNetProperties_v4_t{full.name,  full.pciPath, full.guid,    full.ptrSupport,
                                  full.speed, full.port,    full.maxComms};
  return ncclSuccess;
}
ncclResult_t listen_v4(int dev, void* handle, void** listen_comm) {
  return guarded("listen", [&] {
    return plugin_instance().listen(dev, handle, NCCL_NET_HANDLE_MAXSIZE_V4, listen_comm);
  });
}

// Call a non-blocking setup step until it yields a comm, fails, or times out.
template <class Step>
ncclResult_t block_until_ready(const char* what, void** out, Step step) {
  if (out == nullptr) return ncclInvalidArgument;
  const auto deadline = std::chrono::steady_clock::now() + kV4BlockingTimeout;
  for (;;) {
    ncclResult_t rc = step();
    if (rc != ncclSuccess || *out != nullptr) return rc;
    if (std::chrono::steady_clock::now() > deadline) {
      OFI_WARN("NET/OFI v4 %s: no connection within %lld s", what,
               static_cast<long long>(kV4BlockingTimeout.count()));
      return ncclRemoteError;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}
ncclResult_t connect_v4(int dev, void* handle, void** send_comm) {
  return block_until_ready("connect", send_comm, [&] {
    return guarded("connect", [&] {
      return plugin_instance().connect(dev, handle, NCCL_NET_HANDLE_MAXSIZE_V4, send_comm);
    });
  });
}
ncclResult_t accept_v4(void* listen_comm, void** recv_comm) {
  return block_until_ready("accept", recv_comm, [&] { return accept(listen_comm, recv_comm); });
}
ncclResult_t isend_v4(void* send_comm, void* data, int size, void* mhandle, void** request) {
  return isend(send_comm, data, size, 0, mhandle, request);
}
ncclResult_t irecv_v4(void* recv_comm, void* data, int size, void* mhandle, void** request) {
  int tag = 0;
  return irecv(recv_comm, 1, &data, &size, &tag, &mhandle, request);
}
ncclResult_t iflush_v4(void* recv_comm, void* data, int size, void* mhandle, void** request) {
  return iflush(recv_comm, 1, &data, &size, &mhandle, request);
}

}  // namespace
}  // namespace nccom::ofi

namespace ofi = nccom::ofi;

extern "C" {

NCCOM_OFI_EXPORT extern const ncclNet_v6_t ncclNetPlugin_v6;
NCCOM_OFI_EXPORT extern const ncclNet_v5_t ncclNetPlugin_v5;
NCCOM_OFI_EXPORT extern const ncclNet_v4_t ncclNetPlugin_v4;

const ncclNet_v6_t ncclNetPlugin_v6 = {
    ofi::kName,         ofi::init,       ofi::fini,         ofi::devices,    ofi::get_properties,
    ofi::listen,        ofi::connect,    ofi::accept,       ofi::reg_mr,     ofi::reg_mr_dma_buf,
    ofi::dereg_mr,      ofi::isend,      ofi::irecv,        ofi::iflush,     ofi::test,
    ofi::close_send,    ofi::close_recv, ofi::close_listen, ofi::get_mr_key, ofi::iwrite,
    ofi::iwrite_inline, ofi::iread,
};

// v5: no fini. Unlike the shipped plugin, init registers no exit-time
// finalizer: at exit libfabric may already be finalised; the OS reclaims.
const ncclNet_v5_t ncclNetPlugin_v5 = {
    ofi::kName,      ofi::init,         ofi::devices,    ofi::get_properties, ofi::listen,
    ofi::connect,    ofi::accept,       ofi::reg_mr,     ofi::reg_mr_dma_buf, ofi::dereg_mr,
    ofi::isend,      ofi::irecv,        ofi::iflush,     ofi::test,           ofi::close_send,
    ofi::close_recv, ofi::close_listen, ofi::get_mr_key, ofi::iwrite,         ofi::iwrite_inline,
    ofi::iread,
};

const ncclNet_v4_t ncclNetPlugin_v4 = {
    ofi::kName,     ofi::init,       ofi::devices,    ofi::get_properties_v4,
    ofi::listen_v4, ofi::connect_v4, ofi::accept_v4,  ofi::reg_mr,
    ofi::dereg_mr,  ofi::isend_v4,   ofi::irecv_v4,   ofi::iflush_v4,
    ofi::test,      ofi::close_send, ofi::close_recv, ofi::close_listen,
};

}  // extern "C"
