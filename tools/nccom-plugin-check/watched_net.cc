#include "watched_net.h"

#include "guard.h"

namespace nccom::plugin_check {
namespace {

class WatchedNet final : public net::Net {
 public:
  explicit WatchedNet(std::unique_ptr<net::Net> inner)
      : Net(inner->info(), inner->capabilities()), inner_(std::move(inner)) {
    net::Net* n = inner_.get();
    set_symbol_lookup([n](const char* name) { return n->symbol(name); });
  }

  const ncclNet_v6_t* native_v6() const override { return inner_->native_v6(); }

  ncclResult_t init(ncclDebugLogger_t logger) override {
    guard::PluginCall call("init");
    return inner_->init(logger);
  }
  ncclResult_t fini() override {
    guard::PluginCall call("fini");
    return inner_->fini();
  }
  ncclResult_t devices(int* ndev) override {
    guard::PluginCall call("devices");
    return inner_->devices(ndev);
  }
  ncclResult_t get_properties(int dev, ncclNetProperties_v6_t* props) override {
    guard::PluginCall call("getProperties");
    return inner_->get_properties(dev, props);
  }
  ncclResult_t listen(int dev, void* handle, void** listen_comm) override {
    guard::PluginCall call("listen");
    return inner_->listen(dev, handle, listen_comm);
  }
  ncclResult_t connect(int dev, void* handle, void** send_comm) override {
    guard::PluginCall call("connect");
    return inner_->connect(dev, handle, send_comm);
  }
  ncclResult_t accept(void* listen_comm, void** recv_comm) override {
    guard::PluginCall call("accept");
    return inner_->accept(listen_comm, recv_comm);
  }
  ncclResult_t reg_mr(void* comm, void* data, size_t size, int type, void** mhandle) override {
    guard::PluginCall call("regMr");
    return inner_->reg_mr(comm, data, size, type, mhandle);
  }
  ncclResult_t reg_mr_dma_buf(void* comm, void* data, size_t size, int type, uint64_t offset,
                              int fd, void** mhandle) override {
    guard::PluginCall call("regMrDmaBuf");
    return inner_->reg_mr_dma_buf(comm, data, size, type, offset, fd, mhandle);
  }
  ncclResult_t dereg_mr(void* comm, void* mhandle) override {
    guard::PluginCall call("deregMr");
    return inner_->dereg_mr(comm, mhandle);
  }
  ncclResult_t isend(void* send_comm, void* data, int size, int tag, void* mhandle,
                     void** request) override {
    guard::PluginCall call("isend");
    return inner_->isend(send_comm, data, size, tag, mhandle, request);
  }
  ncclResult_t irecv(void* recv_comm, int n, void** data, int* sizes, int* tags, void** mhandles,
                     void** request) override {
    guard::PluginCall call("irecv");
    return inner_->irecv(recv_comm, n, data, sizes, tags, mhandles, request);
  }
  ncclResult_t iflush(void* recv_comm, int n, void** data, int* sizes, void** mhandles,
                      void** request) override {
    guard::PluginCall call("iflush");
    return inner_->iflush(recv_comm, n, data, sizes, mhandles, request);
  }
  ncclResult_t test(void* request, int* done, int* sizes) override {
    guard::PluginCall call("test");
    return inner_->test(request, done, sizes);
  }
  ncclResult_t close_send(void* send_comm) override {
    guard::PluginCall call("closeSend");
    return inner_->close_send(send_comm);
  }
  ncclResult_t close_recv(void* recv_comm) override {
    guard::PluginCall call("closeRecv");
    return inner_->close_recv(recv_comm);
  }
  ncclResult_t close_listen(void* listen_comm) override {
    guard::PluginCall call("closeListen");
    return inner_->close_listen(listen_comm);
  }
  ncclResult_t get_mr_key(void* mhandle, uint64_t* mr_key) override {
    guard::PluginCall call("getMrKey");
    return inner_->get_mr_key(mhandle, mr_key);
  }
  ncclResult_t iwrite(void* send_comm, void* src, size_t size, void* src_mhandle, uint64_t dest,
                      uint64_t mr_key, void** request) override {
    guard::PluginCall call("iwrite");
    return inner_->iwrite(send_comm, src, size, src_mhandle, dest, mr_key, request);
  }
  ncclResult_t iwrite_inline(void* send_comm, void* src, size_t size, uint64_t dest,
                             uint64_t mr_key, void** request) override {
    guard::PluginCall call("iwriteInline");
    return inner_->iwrite_inline(send_comm, src, size, dest, mr_key, request);
  }
  ncclResult_t iread(void* recv_comm, void* dest, size_t size, void* dest_mhandle, uint64_t src,
                     uint64_t mr_key, void** request) override {
    guard::PluginCall call("iread");
    return inner_->iread(recv_comm, dest, size, dest_mhandle, src, mr_key, request);
  }

 private:
  std::unique_ptr<net::Net> inner_;
};

}  // namespace

std::unique_ptr<net::Net> watched(std::unique_ptr<net::Net> bound) {
  return std::make_unique<WatchedNet>(std::move(bound));
}

}  // namespace nccom::plugin_check
