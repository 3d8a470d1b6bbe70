// Net-plugin exports (export-table slots 21–36): thin
// wrappers over the process's net plugin (host/net/selection.h), which is
// selected lazily by whichever of them runs first.
//
// Argument adaptation onto the v6 prototypes: Isend passes tag 0; Irecv and
// Iflush pass n = 1 with one-element arrays (and tag 0); Test passes the size
// pointer as the sizes array. NULL pointers the plugin would dereference are
// refused with NRT_INVALID before anything is selected; plugin answers map
// to NRT_STATUS as net::to_nrt_status says (docs/decisions.md, "Net plugins").
#include "abi/export.h"
#include "bootstrap/socket_address.h"
#include "comm/settings.h"
#include "log/log.h"
#include "net/nccl_result.h"
#include "net/selection.h"
#include "transport/net_facade.h"

#include <nccom/net_handle.h>

#include <cstring>
#include <mutex>
#include <string>

namespace net = nccom::net;

namespace {

using nccom::abi::fail;

NRT_STATUS null_argument(const char* export_name, const char* what) {
  NCCOM_WARN("%s: %s is NULL", export_name, what);
  return NRT_INVALID;
}

// Runs `op` on the selected plugin and maps its answer. Selection failures
// were logged where they were classified; a plugin error is logged here.
template <class Op>
NRT_STATUS with_net(const char* export_name, Op&& op) {
  auto selected = net::select();
  if (!selected) return fail(selected.error());
  net::Net& plugin = **selected;
  const ncclResult_t r = op(plugin);
  if (r != ncclSuccess) {
    NCCOM_WARN("%s: %s answered %s", export_name, net::describe(plugin.info()).c_str(),
               net::result_text(r).c_str());
  }
  return net::to_nrt_status(r);
}

}  // namespace

// = ncclInit: the net plugin, then the bootstrap network (its interface is
// chosen to reach root_comm_id when that parses). Both halves run once per
// process; later calls return the first outcome.
NCCOM_API NRT_STATUS neuronInitNet(char* root_comm_id) {
  return nccom::abi::guard("neuronInitNet", [&]() -> NRT_STATUS {
    auto selected = net::select();
    if (!selected) return fail(selected.error());
    nccom::bootstrap::SocketAddress root;
    if (root_comm_id != nullptr && root_comm_id[0] != '\0') {
      if (auto parsed = nccom::bootstrap::SocketAddress::parse(root_comm_id)) root = *parsed;
    }
    auto settings = nccom::comm::bootstrap_settings(root);
    return settings ? NRT_SUCCESS : fail(settings.error());
  });
}

NCCOM_API NRT_STATUS neuronFiniPlugin(void) {
  return nccom::abi::guard("neuronFiniPlugin", [&]() -> NRT_STATUS {
    nccom::Status done = net::finalize();
    return done ? NRT_SUCCESS : fail(done.error());
  });
}

// A native Neuron v6 plugin's own table is handed out as is; any other plugin
// through libnccom's v6 table over it (the transports' facade), wrapped in
// an nccom_adapted_net_t that names the plugin's version, layout and file
// (sdk/include/nccom/net_handle.h). One per process: the net is selected
// once, so the wrapper is built once per selected Net.
NCCOM_API NRT_STATUS neuronGetOFIHandle(void** out) {
  return nccom::abi::guard("neuronGetOFIHandle", [&]() -> NRT_STATUS {
    if (out == nullptr) return null_argument("neuronGetOFIHandle", "out");
    auto selected = net::select();
    if (!selected) return fail(selected.error());
    net::Net& plugin = **selected;
    if (const ncclNet_v6_t* table = plugin.native_v6()) {
      *out = const_cast<ncclNet_v6_t*>(table);
      return NRT_SUCCESS;
    }
    static std::mutex mutex;
    static nccom_adapted_net_t adapted{};
    static const net::Net* adapted_for = nullptr;
    static std::string layout, file;
    std::lock_guard<std::mutex> lock(mutex);
    if (adapted_for != &plugin) {
      const net::PluginInfo& info = plugin.info();
      layout = info.layout == net::Layout::kNvidia ? "NVIDIA" : "Neuron";
      file = info.file;
      adapted = {};
      adapted.net = *nccom::transport::net_v6_for(plugin);
      std::memcpy(adapted.magic, NCCOM_ADAPTED_NET_MAGIC, sizeof adapted.magic);
      adapted.struct_size = sizeof adapted;
      adapted.version = static_cast<uint32_t>(info.version);
      adapted.layout = layout.c_str();
      adapted.file = file.c_str();
      adapted_for = &plugin;
      NCCOM_INFO(nccom::log::kNet,
                 "neuronGetOFIHandle: %s from %s is served through libnccom's "
                 "Neuron ncclNet_v6 adapter",
                 net::describe(info).c_str(), info.origin.c_str());
    }
    *out = &adapted;
    return NRT_SUCCESS;
  });
}

NCCOM_API NRT_STATUS neuronNetListen(int dev, void* handle, void** listen_comm) {
  return nccom::abi::guard("neuronNetListen", [&]() -> NRT_STATUS {
    if (handle == nullptr) return null_argument("neuronNetListen", "handle");
    if (listen_comm == nullptr) return null_argument("neuronNetListen", "listen_comm");
    return with_net("neuronNetListen",
                    [&](net::Net& n) { return n.listen(dev, handle, listen_comm); });
  });
}

NCCOM_API NRT_STATUS neuronNetConnect(int dev, void* handle, void** send_comm) {
  return nccom::abi::guard("neuronNetConnect", [&]() -> NRT_STATUS {
    if (handle == nullptr) return null_argument("neuronNetConnect", "handle");
    if (send_comm == nullptr) return null_argument("neuronNetConnect", "send_comm");
    return with_net("neuronNetConnect",
                    [&](net::Net& n) { return n.connect(dev, handle, send_comm); });
  });
}

NCCOM_API NRT_STATUS neuronNetAccept(void* listen_comm, void** recv_comm) {
  return nccom::abi::guard("neuronNetAccept", [&]() -> NRT_STATUS {
    if (listen_comm == nullptr) return null_argument("neuronNetAccept", "listen_comm");
    if (recv_comm == nullptr) return null_argument("neuronNetAccept", "recv_comm");
    return with_net("neuronNetAccept",
                    [&](net::Net& n) { return n.accept(listen_comm, recv_comm); });
  });
}

NCCOM_API NRT_STATUS neuronNetRegMrOG(void* comm, void* data, size_t size, int type,
                                      void** mhandle) {
  return nccom::abi::guard("neuronNetRegMrOG", [&]() -> NRT_STATUS {
    if (comm == nullptr) return null_argument("neuronNetRegMrOG", "comm");
    if (mhandle == nullptr) return null_argument("neuronNetRegMrOG", "mhandle");
    return with_net("neuronNetRegMrOG",
                    [&](net::Net& n) { return n.reg_mr(comm, data, size, type, mhandle); });
  });
}

NCCOM_API NRT_STATUS neuronNetDeregMrOG(void* comm, void* mhandle) {
  return nccom::abi::guard("neuronNetDeregMrOG", [&]() -> NRT_STATUS {
    if (comm == nullptr) return null_argument("neuronNetDeregMrOG", "comm");
    return with_net("neuronNetDeregMrOG", [&](net::Net& n) { return n.dereg_mr(comm, mhandle); });
  });
}

NCCOM_API NRT_STATUS neuronNetGetMrKey(void* mhandle, uint64_t* key_out) {
  return nccom::abi::guard("neuronNetGetMrKey", [&]() -> NRT_STATUS {
    if (mhandle == nullptr) return null_argument("neuronNetGetMrKey", "mhandle");
    if (key_out == nullptr) return null_argument("neuronNetGetMrKey", "key_out");
    return with_net("neuronNetGetMrKey",
                    [&](net::Net& n) { return n.get_mr_key(mhandle, key_out); });
  });
}

NCCOM_API NRT_STATUS neuronNetIsend(void* send_comm, void* data, int size, void* mhandle,
                                    void** request) {
  return nccom::abi::guard("neuronNetIsend", [&]() -> NRT_STATUS {
    if (send_comm == nullptr) return null_argument("neuronNetIsend", "send_comm");
    if (request == nullptr) return null_argument("neuronNetIsend", "request");
    return with_net("neuronNetIsend", [&](net::Net& n) {
      return n.isend(send_comm, data, size, /*tag=*/0, mhandle, request);
    });
  });
}

NCCOM_API NRT_STATUS neuronNetIrecv(void* recv_comm, void* data, int size, void* mhandle,
                                    void** request) {
  return nccom::abi::guard("neuronNetIrecv", [&]() -> NRT_STATUS {
    if (recv_comm == nullptr) return null_argument("neuronNetIrecv", "recv_comm");
    if (request == nullptr) return null_argument("neuronNetIrecv", "request");
    return with_net("neuronNetIrecv", [&](net::Net& n) {
      void* datas[1] = {data};
      int sizes[1] = {size};
      int tags[1] = {0};
      void* mhandles[1] = {mhandle};
      return n.irecv(recv_comm, 1, datas, sizes, tags, mhandles, request);
    });
  });
}

NCCOM_API NRT_STATUS neuronNetIflush(void* recv_comm, void* data, int size, void* mhandle,
                                     void** request) {
  return nccom::abi::guard("neuronNetIflush", [&]() -> NRT_STATUS {
    if (recv_comm == nullptr) return null_argument("neuronNetIflush", "recv_comm");
    if (request == nullptr) return null_argument("neuronNetIflush", "request");
    return with_net("neuronNetIflush", [&](net::Net& n) {
      void* datas[1] = {data};
      int sizes[1] = {size};
      void* mhandles[1] = {mhandle};
      return n.iflush(recv_comm, 1, datas, sizes, mhandles, request);
    });
  });
}

NCCOM_API NRT_STATUS neuronNetTest(void* request, int* done, int* size) {
  return nccom::abi::guard("neuronNetTest", [&]() -> NRT_STATUS {
    if (request == nullptr) return null_argument("neuronNetTest", "request");
    if (done == nullptr) return null_argument("neuronNetTest", "done");
    return with_net("neuronNetTest", [&](net::Net& n) { return n.test(request, done, size); });
  });
}

NCCOM_API NRT_STATUS neuronNetCloseSend(void* send_comm) {
  return nccom::abi::guard("neuronNetCloseSend", [&]() -> NRT_STATUS {
    if (send_comm == nullptr) return null_argument("neuronNetCloseSend", "send_comm");
    return with_net("neuronNetCloseSend", [&](net::Net& n) { return n.close_send(send_comm); });
  });
}

NCCOM_API NRT_STATUS neuronNetCloseRecv(void* recv_comm) {
  return nccom::abi::guard("neuronNetCloseRecv", [&]() -> NRT_STATUS {
    if (recv_comm == nullptr) return null_argument("neuronNetCloseRecv", "recv_comm");
    return with_net("neuronNetCloseRecv", [&](net::Net& n) { return n.close_recv(recv_comm); });
  });
}

NCCOM_API NRT_STATUS neuronNetCloseListen(void* listen_comm) {
  return nccom::abi::guard("neuronNetCloseListen", [&]() -> NRT_STATUS {
    if (listen_comm == nullptr) return null_argument("neuronNetCloseListen", "listen_comm");
    return with_net("neuronNetCloseListen",
                    [&](net::Net& n) { return n.close_listen(listen_comm); });
  });
}
