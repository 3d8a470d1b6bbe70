// Neuron ncclNet_v6 and v5 (v6 without fini): both
// have the host's own slot shapes, so every call goes straight through the
// table; one template serves both. Only the optional slots can be missing;
// call() answers for them. A v5 init registers the plugin's own process-exit
// cleanup, which is why a v5 has nothing to call at fini time.
#include "net/adapters.h"
#include "net/bound_net.h"
#include "net/plugin_answers.h"

namespace nccom::net {
namespace {

template <class Table>
constexpr bool kHasFini = requires(const Table& t) { t.fini; };

template <class Table>
unsigned capabilities_of(const Table& t) {
  unsigned caps = kCapTags | kCapNonBlockingConnect;
  if constexpr (kHasFini<Table>) {
    if (t.fini != nullptr) caps |= kCapFini;
  }
  if (t.regMrDmaBuf != nullptr) caps |= kCapDmaBuf;
  if (t.iflush != nullptr) caps |= kCapFlush;
  // The RMA operations libnccom uses (iwrite/iwriteInline are never called).
  if (t.getMrKey != nullptr && t.iread != nullptr) caps |= kCapRma;
  return caps;
}

template <class Table>
class NeuronDirect final : public BoundNet {
 public:
  NeuronDirect(const Table* t, PluginInfo info, std::unique_ptr<plugin::SharedLibrary> lib)
      : BoundNet(std::move(info), capabilities_of(*t), std::move(lib)), t_(t) {}

  const ncclNet_v6_t* native_v6() const override {
    if constexpr (kHasFini<Table>) {
      return t_;
    } else {
      return nullptr;
    }
  }

  ncclResult_t init(ncclDebugLogger_t logger) override { return t_->init(logger); }
  ncclResult_t fini() override {
    if constexpr (kHasFini<Table>) {
      return t_->fini != nullptr ? t_->fini() : no_fini("its ncclNet_v6 table leaves fini NULL");
    } else {
      return no_fini("a v5 plugin registers its own process-exit cleanup in init");
    }
  }
  ncclResult_t devices(int* ndev) override { return t_->devices(ndev); }
  ncclResult_t get_properties(int dev, ncclNetProperties_v6_t* props) override {
    return t_->getProperties(dev, props);  // v5's properties are the v6 struct
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
    return t_->regMr(comm, data, size, type, mhandle);
  }
  ncclResult_t reg_mr_dma_buf(void* comm, void* data, size_t size, int type, uint64_t offset,
                              int fd, void** mhandle) override {
    return call(Op::kRegMrDmaBuf, t_->regMrDmaBuf, comm, data, size, type, offset, fd, mhandle);
  }
  ncclResult_t dereg_mr(void* comm, void* mhandle) override { return t_->deregMr(comm, mhandle); }
  ncclResult_t isend(void* send_comm, void* data, int size, int tag, void* mhandle,
                     void** request) override {
    return t_->isend(send_comm, data, size, tag, mhandle, request);
  }
  ncclResult_t irecv(void* recv_comm, int n, void** data, int* sizes, int* tags, void** mhandles,
                     void** request) override {
    return t_->irecv(recv_comm, n, data, sizes, tags, mhandles, request);
  }
  ncclResult_t iflush(void* recv_comm, int n, void** data, int* sizes, void** mhandles,
                      void** request) override {
    return call(Op::kIflush, t_->iflush, recv_comm, n, data, sizes, mhandles, request);
  }
  ncclResult_t test(void* request, int* done, int* sizes) override {
    return t_->test(request, done, sizes);
  }
  ncclResult_t close_send(void* send_comm) override { return t_->closeSend(send_comm); }
  ncclResult_t close_recv(void* recv_comm) override { return t_->closeRecv(recv_comm); }
  ncclResult_t close_listen(void* listen_comm) override { return t_->closeListen(listen_comm); }
  ncclResult_t get_mr_key(void* mhandle, uint64_t* mr_key) override {
    return call(Op::kGetMrKey, t_->getMrKey, mhandle, mr_key);
  }
  ncclResult_t iwrite(void* send_comm, void* src, size_t size, void* src_mhandle, uint64_t dest,
                      uint64_t mr_key, void** request) override {
    return call(Op::kIwrite, t_->iwrite, send_comm, src, size, src_mhandle, dest, mr_key, request);
  }
  ncclResult_t iwrite_inline(void* send_comm, void* src, size_t size, uint64_t dest,
                             uint64_t mr_key, void** request) override {
    return call(Op::kIwriteInline, t_->iwriteInline, send_comm, src, size, dest, mr_key, request);
  }
  ncclResult_t iread(void* recv_comm, void* dest, size_t size, void* dest_mhandle, uint64_t src,
                     uint64_t mr_key, void** request) override {
    return call(Op::kIread, t_->iread, recv_comm, dest, size, dest_mhandle, src, mr_key, request);
  }

 private:
  const Table* t_;
};

// The slots both versions must have, checked with their own optional ones.
template <class Table>
Result<void, plugin::LoadError> check_neuron_table(const BoundTable& table, const Table* t,
                                                   std::initializer_list<Slot> optional) {
  return check_table(
      table, t->name,
      {slot("init", t->init), slot("devices", t->devices), slot("getProperties", t->getProperties),
       slot("listen", t->listen), slot("connect", t->connect), slot("accept", t->accept),
       slot("regMr", t->regMr), slot("deregMr", t->deregMr), slot("isend", t->isend),
       slot("irecv", t->irecv), slot("test", t->test), slot("closeSend", t->closeSend),
       slot("closeRecv", t->closeRecv), slot("closeListen", t->closeListen)},
      optional);
}

}  // namespace

BindResult adapt_neuron_v6(BoundTable table) {
  const auto* t = static_cast<const ncclNet_v6_t*>(table.table);
  auto checked = check_neuron_table(
      table, t,
      {slot("fini", t->fini), slot("regMrDmaBuf", t->regMrDmaBuf), slot("iflush", t->iflush),
       slot("getMrKey", t->getMrKey), slot("iwrite", t->iwrite),
       slot("iwriteInline", t->iwriteInline), slot("iread", t->iread)});
  if (!checked) return checked.take_error();
  PluginInfo info{
      bounded_text(t->name, kMaxNetNameBytes), 6, Layout::kNeuron, std::move(table.origin), {}};
  return std::unique_ptr<Net>(
      new NeuronDirect<ncclNet_v6_t>(t, std::move(info), std::move(table.library)));
}

BindResult adapt_neuron_v5(BoundTable table) {
  const auto* t = static_cast<const ncclNet_v5_t*>(table.table);
  auto checked =
      check_neuron_table(table, t,
                         {slot("regMrDmaBuf", t->regMrDmaBuf), slot("iflush", t->iflush),
                          slot("getMrKey", t->getMrKey), slot("iwrite", t->iwrite),
                          slot("iwriteInline", t->iwriteInline), slot("iread", t->iread)});
  if (!checked) return checked.take_error();
  PluginInfo info{
      bounded_text(t->name, kMaxNetNameBytes), 5, Layout::kNeuron, std::move(table.origin), {}};
  return std::unique_ptr<Net>(
      new NeuronDirect<ncclNet_v5_t>(t, std::move(info), std::move(table.library)));
}

}  // namespace nccom::net
