// The v6 table transports receive: a facade over the Net (a native v6
// plugin's too) whose absent capabilities are NULL slots.
#include "transport/net_facade.h"

#include "net/setup_calls.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nccom::transport {
namespace {

// A Net that records the calls forwarded to it (the facade's only job is
// forwarding, so recording is the observable).
class RecordingNet : public net::Net {
 public:
  RecordingNet(std::string name, unsigned caps, const ncclNet_v6_t* native = nullptr)
      : Net(net::PluginInfo{std::move(name), 5, net::Layout::kNeuron, "test", {}}, caps),
        native_(native) {}
  const ncclNet_v6_t* native_v6() const override { return native_; }
  std::vector<std::string> calls;

  ncclResult_t init(ncclDebugLogger_t) override { return note("init"); }
  ncclResult_t fini() override { return note("fini"); }
  int device_answer = 3;
  int max_recvs_answer = 1;
  ncclResult_t devices(int* n) override {
    *n = device_answer;
    return note("devices");
  }
  ncclResult_t get_properties(int, ncclNetProperties_v6_t* p) override {
    *p = ncclNetProperties_v6_t{};
    p->maxRecvs = max_recvs_answer;
    return note("props");
  }
  ncclResult_t listen(int dev, void*, void**) override {
    return note("listen " + std::to_string(dev));
  }
  ncclResult_t connect(int, void*, void**) override { return note("connect"); }
  ncclResult_t accept(void*, void**) override { return note("accept"); }
  ncclResult_t reg_mr(void*, void*, size_t size, int type, void**) override {
    return note("reg_mr " + std::to_string(size) + " " + std::to_string(type));
  }
  ncclResult_t reg_mr_dma_buf(void*, void*, size_t, int, uint64_t, int, void**) override {
    return note("dmabuf");
  }
  ncclResult_t dereg_mr(void*, void*) override { return note("dereg"); }
  ncclResult_t isend(void*, void*, int size, int tag, void*, void** req) override {
    *req = this;
    return note("isend " + std::to_string(size) + " tag " + std::to_string(tag));
  }
  ncclResult_t irecv(void*, int n, void**, int*, int*, void**, void**) override {
    return note("irecv n=" + std::to_string(n));
  }
  ncclResult_t iflush(void*, int, void**, int*, void**, void**) override { return note("iflush"); }
  ncclResult_t test(void*, int* done, int* sizes) override {
    *done = 1;
    *sizes = 77;
    return note("test");
  }
  ncclResult_t close_send(void*) override { return note("close_send"); }
  ncclResult_t close_recv(void*) override { return note("close_recv"); }
  ncclResult_t close_listen(void*) override { return note("close_listen"); }
  ncclResult_t get_mr_key(void*, uint64_t* k) override {
    *k = 42;
    return note("key");
  }
  ncclResult_t iwrite(void*, void*, size_t, void*, uint64_t, uint64_t, void**) override {
    return note("iwrite");
  }
  ncclResult_t iwrite_inline(void*, void*, size_t, uint64_t, uint64_t, void**) override {
    return note("iwi");
  }
  ncclResult_t iread(void*, void*, size_t n, void*, uint64_t, uint64_t, void**) override {
    return note("iread " + std::to_string(n));
  }

 private:
  ncclResult_t note(std::string c) {
    calls.push_back(std::move(c));
    return ncclSuccess;
  }
  const ncclNet_v6_t* native_;
};

TEST(TransportNetFacade, ANativeTableIsServedThroughTheFacadeToo) {
  // Whether a plugin's connect/accept block cannot be known from its
  // version, so a native table is not handed out either: its calls go
  // through the facade (and connect/accept through net::SetupCalls).
  ncclNet_v6_t native{};
  native.name = "native";
  RecordingNet net("native", net::kCapRma, &native);
  const ncclNet_v6_t* t = net_v6_for(net);
  ASSERT_NE(t, &native);
  EXPECT_STREQ(t->name, "native");
  void* comm = nullptr;
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  // Each call runs on a helper; calling again collects it (until then the
  // answer is "call again").
  auto settle = [&](auto call) {
    do EXPECT_EQ(call(), ncclSuccess);
    while (net.setup_calls().helpers() != 0);
  };
  settle([&] { return t->connect(0, handle, &comm); });
  settle([&] { return t->accept(&net, &comm); });
  EXPECT_EQ(t->closeListen(&net), ncclSuccess);
  const std::vector<std::string> expected = {"connect", "accept", "close_listen"};
  EXPECT_EQ(net.calls, expected);
}

TEST(TransportNetFacade, AnAdaptedNetIsServedAsV6WithItsGapsAsNullSlots) {
  RecordingNet net("old socket", net::kCapTags);  // no RMA, no flush, no dma-buf
  const ncclNet_v6_t* t = net_v6_for(net);
  ASSERT_NE(t, nullptr);
  EXPECT_STREQ(t->name, "old socket");
  EXPECT_EQ(t->iread, nullptr);
  EXPECT_EQ(t->getMrKey, nullptr);
  EXPECT_EQ(t->iwrite, nullptr);
  EXPECT_EQ(t->iflush, nullptr);
  EXPECT_EQ(t->regMrDmaBuf, nullptr);
  int n = 0;
  EXPECT_EQ(t->devices(&n), ncclSuccess);
  EXPECT_EQ(n, 3);
  void* req = nullptr;
  char buf[8];
  EXPECT_EQ(t->isend(nullptr, buf, 8, 5, nullptr, &req), ncclSuccess);
  EXPECT_EQ(req, &net);
  int done = 0, size = 0;
  EXPECT_EQ(t->test(req, &done, &size), ncclSuccess);
  EXPECT_EQ(size, 77);
  void* mh = nullptr;
  EXPECT_EQ(t->regMr(nullptr, buf, 8, 1, &mh), ncclSuccess);
  // init/fini belong to the host: not forwarded.
  EXPECT_EQ(t->init(nullptr), ncclSuccess);
  EXPECT_EQ(t->fini(), ncclSuccess);
  const std::vector<std::string> expected = {"devices", "isend 8 tag 5", "test", "reg_mr 8 1"};
  EXPECT_EQ(net.calls, expected);
}

TEST(TransportNetFacade, RmaCapableNetsGetTheRmaSlots) {
  RecordingNet net("rma", net::kCapTags | net::kCapRma | net::kCapFlush);
  const ncclNet_v6_t* t = net_v6_for(net);
  ASSERT_NE(t->iread, nullptr);
  ASSERT_NE(t->getMrKey, nullptr);
  ASSERT_NE(t->iflush, nullptr);
  uint64_t key = 0;
  EXPECT_EQ(t->getMrKey(nullptr, &key), ncclSuccess);
  EXPECT_EQ(key, 42u);
  char buf[4];
  void* req = nullptr;
  EXPECT_EQ(t->iread(nullptr, buf, 4, nullptr, 0, key, &req), ncclSuccess);
  EXPECT_EQ(net.calls.back(), "iread 4");
}

// A transport is handed maxRecvs within 1..NCCL_NET_MAX_REQUESTS and at
// most kMaxNetDevices devices, whatever the plugin answers.
TEST(TransportNetFacade, CountsFromThePluginAreBoundedForTransports) {
  RecordingNet net("counts", net::kCapTags);
  const ncclNet_v6_t* t = net_v6_for(net);
  ncclNetProperties_v6_t props{};
  for (const auto& [answer, handed] : {std::pair<int, int>{1, 1},
                                       {0, 1},
                                       {-5, 1},
                                       {128, 128},
                                       {129, NCCL_NET_MAX_REQUESTS},
                                       {1 << 30, NCCL_NET_MAX_REQUESTS}}) {
    net.max_recvs_answer = answer;
    ASSERT_EQ(t->getProperties(0, &props), ncclSuccess);
    EXPECT_EQ(props.maxRecvs, handed) << "the plugin answered " << answer;
  }
  for (const auto& [answer, handed] :
       {std::pair<int, int>{1, 1}, {256, 256}, {257, 256}, {1 << 30, 256}}) {
    net.device_answer = answer;
    int n = 0;
    ASSERT_EQ(t->devices(&n), ncclSuccess);
    EXPECT_EQ(n, handed) << "the plugin answered " << answer;
  }
}

// The net transports call (nccom_transport_net_t): each table carries its
// own Net as context, so two Nets are served side by side — where the
// context-free v6 table can only forward to the one bound last.
TEST(TransportNetWithCtx, EachTableForwardsToItsOwnNetWhateverIsBound) {
  RecordingNet a("a", net::kCapTags);
  RecordingNet b("b", net::kCapTags | net::kCapRma | net::kCapFlush);
  const nccom_transport_net_t ta = net_with_ctx(a);
  const nccom_transport_net_t tb = net_with_ctx(b);
  (void)net_v6_for(b);  // the context-free table now forwards to b only
  ASSERT_EQ(ta.struct_size, sizeof(nccom_transport_net_t));
  EXPECT_EQ(ta.ctx, &a);
  EXPECT_STREQ(ta.name, "a");
  EXPECT_STREQ(tb.name, "b");
  char buf[8];
  void* req = nullptr;
  ASSERT_EQ(ta.isend(ta.ctx, nullptr, buf, 8, 3, nullptr, &req), ncclSuccess);
  EXPECT_EQ(req, &a);
  int done = 0, size = 0;
  ASSERT_EQ(ta.test(ta.ctx, req, &done, &size), ncclSuccess);
  ASSERT_EQ(tb.isend(tb.ctx, nullptr, buf, 4, 9, nullptr, &req), ncclSuccess);
  EXPECT_EQ(req, &b);
  EXPECT_EQ(a.calls, (std::vector<std::string>{"isend 8 tag 3", "test"}));
  EXPECT_EQ(b.calls, (std::vector<std::string>{"isend 4 tag 9"}));
}

TEST(TransportNetWithCtx, GapsAreNullSlotsAndCountsAreBounded) {
  RecordingNet plain("plain", net::kCapTags);
  const nccom_transport_net_t t = net_with_ctx(plain);
  EXPECT_EQ(t.iread, nullptr);
  EXPECT_EQ(t.get_mr_key, nullptr);
  EXPECT_EQ(t.iwrite, nullptr);
  EXPECT_EQ(t.iwrite_inline, nullptr);
  EXPECT_EQ(t.iflush, nullptr);
  EXPECT_EQ(t.reg_mr_dma_buf, nullptr);
  plain.device_answer = 1 << 30;
  plain.max_recvs_answer = 1 << 30;
  int n = 0;
  ASSERT_EQ(t.devices(t.ctx, &n), ncclSuccess);
  EXPECT_EQ(n, 256);
  ncclNetProperties_v6_t props{};
  ASSERT_EQ(t.get_properties(t.ctx, 0, &props), ncclSuccess);
  EXPECT_EQ(props.maxRecvs, NCCL_NET_MAX_REQUESTS);

  RecordingNet rma("rma", net::kCapTags | net::kCapRma | net::kCapFlush | net::kCapDmaBuf);
  const nccom_transport_net_t r = net_with_ctx(rma);
  ASSERT_NE(r.iread, nullptr);
  ASSERT_NE(r.get_mr_key, nullptr);
  ASSERT_NE(r.iflush, nullptr);
  ASSERT_NE(r.reg_mr_dma_buf, nullptr);
  uint64_t key = 0;
  ASSERT_EQ(r.get_mr_key(r.ctx, nullptr, &key), ncclSuccess);
  EXPECT_EQ(key, 42u);
  // connect runs on a helper thread (bounded), as through the v6 table.
  void* comm = nullptr;
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  do ASSERT_EQ(r.connect(r.ctx, 0, handle, &comm), ncclSuccess);
  while (rma.setup_calls().helpers() != 0);
  EXPECT_EQ(rma.calls, (std::vector<std::string>{"key", "connect"}));
}

}  // namespace
}  // namespace nccom::transport
