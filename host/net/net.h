// nccom::net::Net — a network plugin as the host uses it: the operations of
// the Neuron ncclNet_v6 ABI (sdk/include/nccom/net_v6.h). A native v6 plugin
// is called straight through its table; v5, v4 and NVIDIA-layout plugins are
// served through adapter objects (one per loaded plugin, so two plugins of
// one version can coexist). An operation the plugin does not have returns
// ncclInvalidUsage and logs once that it is unsupported; supports() tells
// callers beforehand, so nothing ever calls through a NULL slot.
//
// Whatever the plugin's version, callers use v6 semantics: listen/connect
// handles are NCCL_NET_HANDLE_MAXSIZE (128) byte buffers, connect/accept may
// answer NULL ("call again"), irecv/iflush take arrays of n entries.
// Loading, adapting and choosing plugins: bind.h and selection.h.
#pragma once

#include "plugin/shared_library.h"

#include <nccom/net_v4.h>
#include <nccom/net_v5.h>
#include <nccom/net_v6.h>
#include <nccom/util/result.h>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace nccom::net {

enum class Layout {
  kNeuron,  // aws-ofi-nccl Neuron headers (what nccom's SDK defines)
  kNvidia   // upstream NVIDIA headers: same symbol names, other slot orders
};

enum Capability : unsigned {
  kCapFini = 1u << 0,                // has fini (v6)
  kCapTags = 1u << 1,                // isend/irecv carry tags (v5+)
  kCapNonBlockingConnect = 1u << 2,  // connect/accept return NULL until ready (v5+)
  kCapDmaBuf = 1u << 3,              // regMrDmaBuf
  kCapRma = 1u << 4,                 // getMrKey / iwrite / iwriteInline / iread usable
  kCapFlush = 1u << 5                // iflush present
};

struct PluginInfo {
  std::string name;  // the table's name field, e.g. "AWS Libfabric"
  int version = 0;   // 4, 5 or 6
  Layout layout = Layout::kNeuron;
  std::string origin;  // where it came from, for messages: a file path, "the runtime's ..."
  std::string file;    // the file that holds the table (dladdr), "" when unknown
};

// "neuron" / "nvidia".
const char* to_string(Layout layout);
// The plugin as messages name it: "AWS Libfabric (Neuron ncclNet_v6)".
std::string describe(const PluginInfo& info);

class SetupCalls;

class Net {
 public:
  virtual ~Net();

  const PluginInfo& info() const { return info_; }
  unsigned capabilities() const { return capabilities_; }
  bool supports(Capability c) const { return (capabilities_ & c) != 0; }
  // The plugin's own table when it is a native Neuron v6 plugin (what
  // neuronGetOFIHandle hands out); nullptr for adapted plugins.
  virtual const ncclNet_v6_t* native_v6() const { return nullptr; }

  // Another symbol exported by the plugin's file (e.g. nccomNetConfig),
  // looked up by dlsym on the plugin's own handle; nullptr when absent or
  // when the Net was not made by bind.h.
  void* symbol(const char* name) const { return lookup_ ? lookup_(name) : nullptr; }
  using SymbolLookup = std::function<void*(const char*)>;
  void set_symbol_lookup(SymbolLookup lookup) { lookup_ = std::move(lookup); }
  // An object that must live as long as this Net (the host API handed to the
  // plugin's configure, which the plugin may keep).
  void keep_alive(std::shared_ptr<void> object) { kept_.push_back(std::move(object)); }
  // Set once by bind.h, from where the plugin's table lies.
  void set_file(std::string file) { info_.file = std::move(file); }

  // This plugin's connect/accept run on helper threads (setup_calls.h); made
  // on first use, lives as long as this Net.
  SetupCalls& setup_calls();

  virtual ncclResult_t init(ncclDebugLogger_t logger) = 0;
  virtual ncclResult_t fini() = 0;
  virtual ncclResult_t devices(int* ndev) = 0;
  virtual ncclResult_t get_properties(int dev, ncclNetProperties_v6_t* props) = 0;
  virtual ncclResult_t listen(int dev, void* handle, void** listen_comm) = 0;
  virtual ncclResult_t connect(int dev, void* handle, void** send_comm) = 0;
  virtual ncclResult_t accept(void* listen_comm, void** recv_comm) = 0;
  virtual ncclResult_t reg_mr(void* comm, void* data, size_t size, int type, void** mhandle) = 0;
  virtual ncclResult_t reg_mr_dma_buf(void* comm, void* data, size_t size, int type,
                                      uint64_t offset, int fd, void** mhandle) = 0;
  virtual ncclResult_t dereg_mr(void* comm, void* mhandle) = 0;
  virtual ncclResult_t isend(void* send_comm, void* data, int size, int tag, void* mhandle,
                             void** request) = 0;
  virtual ncclResult_t irecv(void* recv_comm, int n, void** data, int* sizes, int* tags,
                             void** mhandles, void** request) = 0;
  virtual ncclResult_t iflush(void* recv_comm, int n, void** data, int* sizes, void** mhandles,
                              void** request) = 0;
  virtual ncclResult_t test(void* request, int* done, int* sizes) = 0;
  virtual ncclResult_t close_send(void* send_comm) = 0;
  virtual ncclResult_t close_recv(void* recv_comm) = 0;
  virtual ncclResult_t close_listen(void* listen_comm) = 0;
  virtual ncclResult_t get_mr_key(void* mhandle, uint64_t* mr_key) = 0;
  virtual ncclResult_t iwrite(void* send_comm, void* src, size_t size, void* src_mhandle,
                              uint64_t dest, uint64_t mr_key, void** request) = 0;
  virtual ncclResult_t iwrite_inline(void* send_comm, void* src, size_t size, uint64_t dest,
                                     uint64_t mr_key, void** request) = 0;
  virtual ncclResult_t iread(void* recv_comm, void* dest, size_t size, void* dest_mhandle,
                             uint64_t src, uint64_t mr_key, void** request) = 0;

 protected:
  Net(PluginInfo info, unsigned capabilities);

 private:
  PluginInfo info_;
  unsigned capabilities_;
  SymbolLookup lookup_;  // valid as long as this Net (it owns or borrows the handle)
  std::mutex setup_calls_mutex_;
  std::unique_ptr<SetupCalls> setup_calls_;
  std::vector<std::shared_ptr<void>> kept_;
};

}  // namespace nccom::net
