// The upstream NVIDIA ncclNet_v5 and ncclNet_v6 tables,
// bound only when net.plugin_layout = "nvidia". They have v6 semantics (tags,
// multi-receive, non-blocking connect, 128-byte handles), so most calls go
// straight through; the differences are adapted here:
//  - regMr takes an int size: larger registrations are refused;
//  - 48-byte properties, widened into the Neuron 80-byte struct (no global
//    registrations, no RMA);
//  - no fini and no RMA tail; v5 has no regMrDmaBuf either;
//  - at most 8 requests in flight per comm, as NCCL gave them
//    (request_budget.h): past that a post answers NULL without reaching the
//    plugin;
//  - received sizes the plugin leaves unwritten stay unwritten (NCCL read
//    them only to size a GPU flush): callers prefill them
//    (NCCOM_NET_SIZE_UNREPORTED) and rely on them only where they must.
// NVIDIA v4 is served by adapter_v4.cc together with Neuron v4.
#include "net/adapters.h"
#include "net/bound_net.h"
#include "net/nvidia_layouts.h"
#include "net/plugin_answers.h"
#include "net/request_budget.h"

#include <climits>
#include <type_traits>

namespace nccom::net {
namespace {

void widen(const nvidia::Properties_v6& in, ncclNetProperties_v6_t* out) {
  *out = ncclNetProperties_v6_t{};
  out->name = in.name;
  out->pciPath = in.pciPath;
  out->guid = in.guid;
  out->ptrSupport = in.ptrSupport;
  out->speed = in.speed;
  out->port = in.port;
  out->latency = in.latency;
  out->maxComms = in.maxComms;
  out->maxRecvs = in.maxRecvs;
  out->rma_supported = 0;
}

template <class Table>
class NvidiaNet final : public BoundNet {
  static constexpr bool kV6 = std::is_same_v<Table, nvidia::Net_v6>;

  static unsigned capabilities_of(const Table& t) {
    unsigned caps = kCapTags | kCapNonBlockingConnect;
    if (t.iflush != nullptr) caps |= kCapFlush;
    if constexpr (kV6) {
      if (t.regMrDmaBuf != nullptr) caps |= kCapDmaBuf;
    }
    return caps;
  }

 public:
  NvidiaNet(const Table* t, PluginInfo info, std::unique_ptr<plugin::SharedLibrary> lib)
      : BoundNet(std::move(info), capabilities_of(*t), std::move(lib)), t_(t) {}

  ncclResult_t init(ncclDebugLogger_t logger) override { return t_->init(logger); }
  ncclResult_t fini() override { return no_fini("NVIDIA v5/v6 plugins clean up at process exit"); }
  ncclResult_t devices(int* ndev) override { return t_->devices(ndev); }
  ncclResult_t get_properties(int dev, ncclNetProperties_v6_t* props) override {
    if (props == nullptr) return ncclInvalidArgument;
    nvidia::Properties_v6 narrow{};
    const ncclResult_t r = t_->getProperties(dev, &narrow);
    if (r == ncclSuccess) widen(narrow, props);
    return r;
  }
  ncclResult_t listen(int dev, void* handle, void** listen_comm) override {
    return t_->listen(dev, handle, listen_comm);
  }
  ncclResult_t connect(int dev, void* handle, void** send_comm) override {
    return t_->connect(dev, handle, send_comm);
  }
  ncclResult_t accept(void* listen_comm, void** recv_comm) override {
    return t_->accept(listen_comm, recv_comm);
  }
  ncclResult_t reg_mr(void* comm, void* data, size_t size, int type, void** mhandle) override {
    if (size > static_cast<size_t>(INT_MAX)) {
      return refuse(Refusal::kIntSize, ncclInvalidArgument,
                    "register more than INT_MAX bytes at once (its regMr takes an int size)");
    }
    return t_->regMr(comm, data, static_cast<int>(size), type, mhandle);
  }
  ncclResult_t reg_mr_dma_buf(void* comm, void* data, size_t size, int type, uint64_t offset,
                              int fd, void** mhandle) override {
    if constexpr (kV6) {
      return call(Op::kRegMrDmaBuf, t_->regMrDmaBuf, comm, data, size, type, offset, fd, mhandle);
    } else {
      return unsupported(Op::kRegMrDmaBuf);
    }
  }
  ncclResult_t dereg_mr(void* comm, void* mhandle) override { return t_->deregMr(comm, mhandle); }
  ncclResult_t isend(void* send_comm, void* data, int size, int tag, void* mhandle,
                     void** request) override {
    return budget_.post(send_comm, request,
                        [&] { return t_->isend(send_comm, data, size, tag, mhandle, request); });
  }
  ncclResult_t irecv(void* recv_comm, int n, void** data, int* sizes, int* tags, void** mhandles,
                     void** request) override {
    return budget_.post(recv_comm, request, [&] {
      return t_->irecv(recv_comm, n, data, sizes, tags, mhandles, request);
    });
  }
  ncclResult_t iflush(void* recv_comm, int n, void** data, int* sizes, void** mhandles,
                      void** request) override {
    return call(Op::kIflush, t_->iflush, recv_comm, n, data, sizes, mhandles, request);
  }
  ncclResult_t test(void* request, int* done, int* sizes) override {
    const ncclResult_t r = t_->test(request, done, sizes);
    if (r != ncclSuccess || (done != nullptr && *done != 0)) budget_.finished(request);
    return r;
  }
  ncclResult_t close_send(void* send_comm) override {
    budget_.closed(send_comm);
    return t_->closeSend(send_comm);
  }
  ncclResult_t close_recv(void* recv_comm) override {
    budget_.closed(recv_comm);
    return t_->closeRecv(recv_comm);
  }
  ncclResult_t close_listen(void* listen_comm) override { return t_->closeListen(listen_comm); }
  ncclResult_t get_mr_key(void*, uint64_t*) override { return unsupported(Op::kGetMrKey); }
  ncclResult_t iwrite(void*, void*, size_t, void*, uint64_t, uint64_t, void**) override {
    return unsupported(Op::kIwrite);
  }
  ncclResult_t iwrite_inline(void*, void*, size_t, uint64_t, uint64_t, void**) override {
    return unsupported(Op::kIwriteInline);
  }
  ncclResult_t iread(void*, void*, size_t, void*, uint64_t, uint64_t, void**) override {
    return unsupported(Op::kIread);
  }

 private:
  const Table* t_;
  RequestBudget budget_{kNvidiaMaxRequests};
};

template <class Table>
BindResult adapt(BoundTable table, int version) {
  const auto* t = static_cast<const Table*>(table.table);
  auto checked = check_table(
      table, t->name,
      {slot("init", t->init), slot("devices", t->devices), slot("getProperties", t->getProperties),
       slot("listen", t->listen), slot("connect", t->connect), slot("accept", t->accept),
       slot("regMr", t->regMr), slot("deregMr", t->deregMr), slot("isend", t->isend),
       slot("irecv", t->irecv), slot("test", t->test), slot("closeSend", t->closeSend),
       slot("closeRecv", t->closeRecv), slot("closeListen", t->closeListen)},
      {slot("iflush", t->iflush)});
  if (!checked) return checked.take_error();
  if constexpr (std::is_same_v<Table, nvidia::Net_v6>) {
    auto dmabuf = check_table(table, t->name, {}, {slot("regMrDmaBuf", t->regMrDmaBuf)});
    if (!dmabuf) return dmabuf.take_error();
  }
  PluginInfo info{bounded_text(t->name, kMaxNetNameBytes),
                  version,
                  Layout::kNvidia,
                  std::move(table.origin),
                  {}};
  return std::unique_ptr<Net>(new NvidiaNet<Table>(t, std::move(info), std::move(table.library)));
}

}  // namespace

BindResult adapt_nvidia_v6(BoundTable table) { return adapt<nvidia::Net_v6>(std::move(table), 6); }
BindResult adapt_nvidia_v5(BoundTable table) { return adapt<nvidia::Net_v5>(std::move(table), 5); }

}  // namespace nccom::net
