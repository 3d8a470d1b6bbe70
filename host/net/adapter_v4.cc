// ncclNet_v4, in both families: the Neuron and the NVIDIA
// v4 tables differ only in regMr's size type (size_t vs int), so one template
// serves both. What v4 cannot express is refused, never approximated:
//  - handles are 64 bytes: listen fills a local 64-byte buffer and copies it
//    into the caller's 128-byte one, zeroing the tail (no stale bytes on the
//    wire); connect hands the plugin a 64-byte copy of the caller's handle;
//  - connect/accept block inside the plugin (the host's retry loop simply
//    never sees NULL);
//  - one buffer per irecv/iflush: n must be 1 (else ncclInvalidArgument);
//  - no tags: a non-zero tag is ncclInvalidUsage;
//  - 40-byte properties, widened into the 80-byte v6 struct with maxRecvs 1,
//    no RMA and no global registrations;
//  - no fini, regMrDmaBuf, getMrKey, iwrite, iwriteInline, iread;
//  - NVIDIA v4 only: at most 8 requests in flight per comm, as NCCL gave them
//    (request_budget.h; the Neuron v4 header allows 128).
#include "net/adapters.h"
#include "net/bound_net.h"
#include "net/nvidia_layouts.h"
#include "net/plugin_answers.h"
#include "net/request_budget.h"

#include <climits>
#include <cstring>
#include <type_traits>

namespace nccom::net {
namespace {

void widen(const ncclNetProperties_v4_t& in, ncclNetProperties_v6_t* out) {
  *out = ncclNetProperties_v6_t{};
  out->name = in.name;
  out->pciPath = in.pciPath;
  out->guid = in.guid;
  out->ptrSupport = in.ptrSupport;
  out->speed = in.speed;
  out->port = in.port;
  out->maxComms = in.maxComms;
  out->maxRecvs = 1;
  out->rma_supported = 0;
}

template <class Table>
class V4Net final : public BoundNet {
  static constexpr bool kIntSize = std::is_same_v<Table, nvidia::Net_v4>;

 public:
  V4Net(const Table* t, PluginInfo info, std::unique_ptr<plugin::SharedLibrary> lib)
      : BoundNet(std::move(info), t->iflush != nullptr ? kCapFlush : 0u, std::move(lib)), t_(t) {}

  ncclResult_t init(ncclDebugLogger_t logger) override { return t_->init(logger); }
  ncclResult_t fini() override { return no_fini("a v4 plugin cleans up at process exit"); }
  ncclResult_t devices(int* ndev) override { return t_->devices(ndev); }
  ncclResult_t get_properties(int dev, ncclNetProperties_v6_t* props) override {
    if (props == nullptr) return ncclInvalidArgument;
    ncclNetProperties_v4_t narrow{};
    const ncclResult_t r = t_->getProperties(dev, &narrow);
    if (r == ncclSuccess) widen(narrow, props);
    return r;
  }
  ncclResult_t listen(int dev, void* handle, void** listen_comm) override {
    if (handle == nullptr) return ncclInvalidArgument;
    unsigned char local[NCCL_NET_HANDLE_MAXSIZE_V4] = {};
    const ncclResult_t r = t_->listen(dev, local, listen_comm);
    if (r == ncclSuccess) {
      std::memcpy(handle, local, sizeof local);
      std::memset(static_cast<unsigned char*>(handle) + sizeof local, 0,
                  NCCL_NET_HANDLE_MAXSIZE - sizeof local);
    }
    return r;
  }
  ncclResult_t connect(int dev, void* handle, void** send_comm) override {
    if (handle == nullptr) return ncclInvalidArgument;
    unsigned char local[NCCL_NET_HANDLE_MAXSIZE_V4];
    std::memcpy(local, handle, sizeof local);
    return t_->connect(dev, local, send_comm);
  }
  ncclResult_t accept(void* listen_comm, void** recv_comm) override {
    return t_->accept(listen_comm, recv_comm);
  }
  ncclResult_t reg_mr(void* comm, void* data, size_t size, int type, void** mhandle) override {
    if constexpr (kIntSize) {
      if (size > static_cast<size_t>(INT_MAX)) {
        return refuse(Refusal::kIntSize, ncclInvalidArgument,
                      "register more than INT_MAX bytes at once (its regMr takes an int size)");
      }
      return t_->regMr(comm, data, static_cast<int>(size), type, mhandle);
    } else {
      return t_->regMr(comm, data, size, type, mhandle);
    }
  }
  ncclResult_t reg_mr_dma_buf(void*, void*, size_t, int, uint64_t, int, void**) override {
    return unsupported(Op::kRegMrDmaBuf);
  }
  ncclResult_t dereg_mr(void* comm, void* mhandle) override { return t_->deregMr(comm, mhandle); }
  ncclResult_t isend(void* send_comm, void* data, int size, int tag, void* mhandle,
                     void** request) override {
    if (tag != 0) return refuse_tag();
    return counted(send_comm, request,
                   [&] { return t_->isend(send_comm, data, size, mhandle, request); });
  }
  ncclResult_t irecv(void* recv_comm, int n, void** data, int* sizes, int* tags, void** mhandles,
                     void** request) override {
    if (n != 1) return refuse_multi();
    if (data == nullptr || sizes == nullptr) return ncclInvalidArgument;
    if (tags != nullptr && tags[0] != 0) return refuse_tag();
    return counted(recv_comm, request, [&] {
      return t_->irecv(recv_comm, data[0], sizes[0], mhandles ? mhandles[0] : nullptr, request);
    });
  }
  ncclResult_t iflush(void* recv_comm, int n, void** data, int* sizes, void** mhandles,
                      void** request) override {
    if (t_->iflush == nullptr) return unsupported(Op::kIflush);
    if (n != 1) return refuse_multi();
    if (data == nullptr || sizes == nullptr) return ncclInvalidArgument;
    return t_->iflush(recv_comm, data[0], sizes[0], mhandles ? mhandles[0] : nullptr, request);
  }
  ncclResult_t test(void* request, int* done, int* sizes) override {
    const ncclResult_t r = t_->test(request, done, sizes);
    if constexpr (kIntSize) {
      if (r != ncclSuccess || (done != nullptr && *done != 0)) budget_.finished(request);
    }
    return r;
  }
  ncclResult_t close_send(void* send_comm) override {
    if constexpr (kIntSize) budget_.closed(send_comm);
    return t_->closeSend(send_comm);
  }
  ncclResult_t close_recv(void* recv_comm) override {
    if constexpr (kIntSize) budget_.closed(recv_comm);
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
  ncclResult_t refuse_tag() const {
    return refuse(Refusal::kTag, ncclInvalidUsage, "carry a non-zero tag (v4 has no tags)");
  }
  ncclResult_t refuse_multi() const {
    return refuse(Refusal::kMultiRecv, ncclInvalidArgument,
                  "take more than one buffer per irecv/iflush (v4 takes one; n must be 1)");
  }

  // NVIDIA v4 posts go through the budget; Neuron v4 posts straight through.
  template <class Post>
  ncclResult_t counted(void* comm, void** request, Post&& post) {
    if constexpr (kIntSize) {
      return budget_.post(comm, request, post);
    } else {
      return post();
    }
  }

  const Table* t_;
  RequestBudget budget_{kNvidiaMaxRequests};
};

template <class Table>
BindResult adapt_v4(BoundTable table, Layout layout) {
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
  PluginInfo info{bounded_text(t->name, kMaxNetNameBytes), 4, layout, std::move(table.origin), {}};
  return std::unique_ptr<Net>(new V4Net<Table>(t, std::move(info), std::move(table.library)));
}

}  // namespace

BindResult adapt_neuron_v4(BoundTable table) {
  return adapt_v4<ncclNet_v4_t>(std::move(table), Layout::kNeuron);
}

BindResult adapt_nvidia_v4(BoundTable table) {
  return adapt_v4<nvidia::Net_v4>(std::move(table), Layout::kNvidia);
}

}  // namespace nccom::net
