// Every adapter, through the Net interface only: a send/recv/test exchange of
// 0, 1 and 4096 bytes, the capabilities it reports, the widened properties,
// and operations the plugin lacks (unsupported, never a crash).
#include "build_paths.h"
#include "net_host_util.h"

#include <climits>
#include <cstring>
#include <vector>

namespace nccom::net::testing {
namespace {

struct Variant {
  const char* stem;  // lib<stem>.so in NET_HOST_PLUGIN_DIR
  Layout layout;
  int version;
  unsigned capabilities;
};

constexpr unsigned kV56 = kCapTags | kCapNonBlockingConnect | kCapFlush;
const Variant kVariants[] = {
    {"nethost-neuron-v6", Layout::kNeuron, 6, kV56 | kCapFini | kCapDmaBuf},
    {"nethost-neuron-v5", Layout::kNeuron, 5, kV56},
    {"nethost-neuron-v4", Layout::kNeuron, 4, kCapFlush},
    {"nethost-nvidia-v6", Layout::kNvidia, 6, kV56 | kCapDmaBuf},
    {"nethost-nvidia-v5", Layout::kNvidia, 5, kV56},
    {"nethost-nvidia-v4", Layout::kNvidia, 4, kCapFlush},
};

void PrintTo(const Variant& v, std::ostream* os) { *os << v.stem; }

class NetHostAdapters : public ::testing::TestWithParam<Variant> {
 protected:
  void SetUp() override {
    auto bound = open_and_bind(plugin_path(GetParam().stem), GetParam().layout, {}, "test");
    ASSERT_TRUE(bound) << bound.error().message;
    net_ = std::move(bound).value();
    ASSERT_EQ(net_->init(nullptr), ncclSuccess);
  }
  std::unique_ptr<Net> net_;
};

TEST_P(NetHostAdapters, ReportsVersionLayoutAndCapabilities) {
  EXPECT_EQ(net_->info().name, "loopback");
  EXPECT_EQ(net_->info().version, GetParam().version);
  EXPECT_EQ(net_->info().layout, GetParam().layout);
  EXPECT_EQ(net_->info().origin, "test");
  EXPECT_EQ(net_->capabilities(), GetParam().capabilities);
  // Only a native Neuron v6 table can be handed to the runtime as is.
  const bool native = GetParam().layout == Layout::kNeuron && GetParam().version == 6;
  EXPECT_EQ(net_->native_v6() != nullptr, native);
  int ndev = 0;
  EXPECT_EQ(net_->devices(&ndev), ncclSuccess);
  EXPECT_EQ(ndev, 1);
}

TEST_P(NetHostAdapters, ExchangesZeroOneAndManyBytes) {
  Endpoints e;
  ASSERT_TRUE(connect_endpoints(*net_, &e));
  for (int size : {0, 1, 4096}) EXPECT_TRUE(exchange(*net_, e, size)) << "size " << size;
  // A flush of the one buffer completes.
  char buffer[8];
  void* data[1] = {buffer};
  int sizes[1] = {8};
  void* request = nullptr;
  ASSERT_EQ(net_->iflush(e.recv, 1, data, sizes, nullptr, &request), ncclSuccess);
  EXPECT_TRUE(wait_done(*net_, request, nullptr));
  close_endpoints(*net_, e);
  lb_stats_t* stats = stats_of(plugin_path(GetParam().stem));
  ASSERT_NE(stats, nullptr);
  EXPECT_EQ(stats->open_comms, 0);
  EXPECT_EQ(stats->open_mrs, 0);
}

TEST_P(NetHostAdapters, PropertiesAreWidenedIntoTheV6Struct) {
  ncclNetProperties_v6_t props;
  std::memset(&props, 0xff, sizeof props);  // every field must be written
  ASSERT_EQ(net_->get_properties(0, &props), ncclSuccess);
  EXPECT_STREQ(props.name, "lo");
  EXPECT_EQ(props.guid, 0x1000u);
  EXPECT_EQ(props.ptrSupport, NCCL_PTR_HOST);
  EXPECT_EQ(props.speed, 100000);
  EXPECT_EQ(props.maxComms, 1024);
  EXPECT_EQ(props.maxRecvs, 1);
  EXPECT_EQ(props.rma_supported, 0);
  if (GetParam().layout == Layout::kNeuron && GetParam().version >= 5) {
    EXPECT_EQ(props.regIsGlobal, 1);  // passed through untouched
    EXPECT_EQ(props.max_write_inline_size, 64u);
  } else {  // narrower tables: the fields they lack are zero
    EXPECT_EQ(props.regIsGlobal, 0);
    EXPECT_EQ(props.max_write_inline_size, 0u);
    EXPECT_EQ(props.max_mr_key_size, 0u);
  }
  EXPECT_FLOAT_EQ(props.latency, GetParam().version == 4 ? 0.0f : 0.5f);
}

TEST_P(NetHostAdapters, MissingOperationsAreUnsupportedNotCrashes) {
  LogCapture log;
  uint64_t key = 0;
  void* request = nullptr;
  char byte = 0;
  EXPECT_EQ(net_->get_mr_key(&byte, &key), ncclInvalidUsage);
  EXPECT_EQ(net_->get_mr_key(&byte, &key), ncclInvalidUsage);
  EXPECT_EQ(net_->iread(&byte, &byte, 1, nullptr, 0, 0, &request), ncclInvalidUsage);
  EXPECT_EQ(net_->iwrite(&byte, &byte, 1, nullptr, 0, 0, &request), ncclInvalidUsage);
  EXPECT_EQ(net_->iwrite_inline(&byte, &byte, 1, 0, 0, &request), ncclInvalidUsage);
  EXPECT_EQ(request, nullptr);
  if (!net_->supports(kCapDmaBuf)) {
    void* mhandle = nullptr;
    EXPECT_EQ(net_->reg_mr_dma_buf(&byte, &byte, 1, NCCL_PTR_HOST, 0, -1, &mhandle),
              ncclInvalidUsage);
  }
  const std::string text = log.text();
  const std::string expected = describe(net_->info()) + " has no getMrKey";
  const auto first = text.find(expected);
  EXPECT_NE(first, std::string::npos) << text;
  EXPECT_EQ(text.find(expected, first + 1), std::string::npos) << "one WARN per op: " << text;
  EXPECT_TRUE(log.has(describe(net_->info()) + " has no iread")) << text;
}

TEST_P(NetHostAdapters, FiniReachesOnlyATableThatHasOne) {
  lb_stats_t* stats = stats_of(plugin_path(GetParam().stem));
  ASSERT_NE(stats, nullptr);
  const int before = stats->fini_calls;
  EXPECT_EQ(net_->fini(), ncclSuccess);
  EXPECT_EQ(stats->fini_calls - before, net_->supports(kCapFini) ? 1 : 0);
}

INSTANTIATE_TEST_SUITE_P(Versions, NetHostAdapters, ::testing::ValuesIn(kVariants),
                         [](const auto& info) {
                           std::string name = info.param.stem + 8;  // after "nethost-"
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

// What v4 cannot express is refused, and its 64-byte handle is copied safely.
class NetHostV4 : public ::testing::TestWithParam<Layout> {
 protected:
  void SetUp() override {
    const char* stem = GetParam() == Layout::kNeuron ? "nethost-neuron-v4" : "nethost-nvidia-v4";
    path_ = plugin_path(stem);
    auto bound = open_and_bind(path_, GetParam(), {}, "test");
    ASSERT_TRUE(bound) << bound.error().message;
    net_ = std::move(bound).value();
    ASSERT_EQ(net_->init(nullptr), ncclSuccess);
  }
  std::string path_;
  std::unique_ptr<Net> net_;
};

TEST_P(NetHostV4, ListenFillsOnlyTheFirst64BytesAndZeroesTheRest) {
  unsigned char handle[NCCL_NET_HANDLE_MAXSIZE];
  std::memset(handle, 0xab, sizeof handle);
  void* listen_comm = nullptr;
  ASSERT_EQ(net_->listen(0, handle, &listen_comm), ncclSuccess);
  for (int i = 16; i < 64; ++i) EXPECT_EQ(handle[i], 0x5a) << i;  // the plugin's bytes
  for (int i = 64; i < 128; ++i) EXPECT_EQ(handle[i], 0) << i;    // no stale tail
  // connect reads its 64 bytes from the 128-byte buffer.
  void* send_comm = nullptr;
  ASSERT_EQ(net_->connect(0, handle, &send_comm), ncclSuccess);
  EXPECT_NE(send_comm, nullptr) << "v4 connect completes in one call";
  void* recv_comm = nullptr;
  ASSERT_EQ(net_->accept(listen_comm, &recv_comm), ncclSuccess);
  EXPECT_NE(recv_comm, nullptr);
  Endpoints e{listen_comm, send_comm, recv_comm};
  close_endpoints(*net_, e);
}

TEST_P(NetHostV4, TagsAndSeveralBuffersAreRefused) {
  LogCapture log;
  Endpoints e;
  ASSERT_TRUE(connect_endpoints(*net_, &e));
  char a[4], b[4];
  void* request = nullptr;
  EXPECT_EQ(net_->isend(e.send, a, 4, /*tag=*/7, nullptr, &request), ncclInvalidUsage);
  void* data[2] = {a, b};
  int sizes[2] = {4, 4};
  int tags[2] = {0, 0};
  EXPECT_EQ(net_->irecv(e.recv, 2, data, sizes, tags, nullptr, &request), ncclInvalidArgument);
  EXPECT_EQ(net_->iflush(e.recv, 2, data, sizes, nullptr, &request), ncclInvalidArgument);
  tags[0] = 3;
  EXPECT_EQ(net_->irecv(e.recv, 1, data, sizes, tags, nullptr, &request), ncclInvalidUsage);
  EXPECT_EQ(request, nullptr);
  lb_stats_t* stats = stats_of(path_);
  ASSERT_NE(stats, nullptr);
  EXPECT_EQ(stats->max_recv_n, 0) << "the plugin never saw a refused call";
  EXPECT_TRUE(log.has("cannot carry a non-zero tag")) << log.text();
  EXPECT_TRUE(log.has("n must be 1")) << log.text();
  close_endpoints(*net_, e);
}

INSTANTIATE_TEST_SUITE_P(Layouts, NetHostV4, ::testing::Values(Layout::kNeuron, Layout::kNvidia),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// NVIDIA regMr takes an int size in every version: larger is refused before
// the plugin sees a truncated size.
TEST(NetHostNvidia, RegistrationsBeyondAnIntAreRefused) {
  for (const char* stem : {"nethost-nvidia-v4", "nethost-nvidia-v5", "nethost-nvidia-v6"}) {
    auto bound = open_and_bind(plugin_path(stem), Layout::kNvidia, {}, "test");
    ASSERT_TRUE(bound) << bound.error().message;
    void* mhandle = nullptr;
    char byte = 0;
    EXPECT_EQ((*bound)->reg_mr(&byte, &byte, size_t{INT_MAX} + 1, NCCL_PTR_HOST, &mhandle),
              ncclInvalidArgument)
        << stem;
    EXPECT_EQ(mhandle, nullptr);
    lb_stats_t* stats = stats_of(plugin_path(stem));
    ASSERT_NE(stats, nullptr);
    EXPECT_EQ(stats->open_mrs, 0) << "the plugin was not called";
  }
}

}  // namespace
}  // namespace nccom::net::testing

namespace nccom::net::testing {
namespace {

// How many 0-byte sends on one comm the adapter lets through before it
// answers a NULL request ("post again later"), out of `tries`.
int sends_posted(Net& net, Endpoints& e, int tries, std::vector<void*>* requests) {
  static char byte = 0;
  for (int i = 0; i < tries; ++i) {
    void* r = nullptr;
    EXPECT_EQ(net.isend(e.send, &byte, 0, 0, nullptr, &r), ncclSuccess);
    if (r == nullptr) break;
    requests->push_back(r);
  }
  return static_cast<int>(requests->size());
}

// Receives what `sends` carry, in order, and waits for each send, so the
// plugin holds no request when its comms close.
void drain(Net& net, Endpoints& e, const std::vector<void*>& sends) {
  for (void* send : sends) {
    char in = 0;
    void* data[1] = {&in};
    int sizes[1] = {1};
    void* recv = nullptr;
    ASSERT_EQ(net.irecv(e.recv, 1, data, sizes, nullptr, nullptr, &recv), ncclSuccess);
    ASSERT_NE(recv, nullptr);
    ASSERT_TRUE(wait_done(net, recv, nullptr));
    ASSERT_TRUE(wait_done(net, send, nullptr));
  }
}

// NVIDIA's v4-v6 headers allow 8 requests in flight per comm
// (NCCL_NET_MAX_REQUESTS), and NCCL never had more: plugins written for them
// may fail a 9th post. The adapter answers NULL instead, without calling the
// plugin, until a request of that comm completes. The Neuron layouts allow
// 128 and pass every post through.
TEST(NetHostNvidia, AtMostEightRequestsPerCommReachThePlugin) {
  for (const char* stem : {"nethost-nvidia-v4", "nethost-nvidia-v5", "nethost-nvidia-v6"}) {
    SCOPED_TRACE(stem);
    auto bound = open_and_bind(plugin_path(stem), Layout::kNvidia, {}, "test");
    ASSERT_TRUE(bound) << bound.error().message;
    Net& net = **bound;
    ASSERT_EQ(net.init(nullptr), ncclSuccess);
    Endpoints e;
    ASSERT_TRUE(connect_endpoints(net, &e));
    std::vector<void*> sends;
    EXPECT_EQ(sends_posted(net, e, 12, &sends), 8);
    // The receiving comm has a budget of its own.
    char in = 0;
    void* data[1] = {&in};
    int sizes[1] = {1};
    void* recv = nullptr;
    ASSERT_EQ(net.irecv(e.recv, 1, data, sizes, nullptr, nullptr, &recv), ncclSuccess);
    ASSERT_NE(recv, nullptr);
    ASSERT_TRUE(wait_done(net, recv, nullptr));
    ASSERT_TRUE(wait_done(net, sends[0], nullptr));
    // The completed send made room for exactly one more.
    std::vector<void*> more;
    EXPECT_EQ(sends_posted(net, e, 3, &more), 1);
    sends.erase(sends.begin());
    sends.insert(sends.end(), more.begin(), more.end());
    drain(net, e, sends);
    close_endpoints(net, e);
  }
}

TEST(NetHostNvidia, NeuronLayoutsPassEveryPostThrough) {
  auto bound = open_and_bind(plugin_path("nethost-neuron-v6"), Layout::kNeuron, {}, "test");
  ASSERT_TRUE(bound) << bound.error().message;
  Net& net = **bound;
  ASSERT_EQ(net.init(nullptr), ncclSuccess);
  Endpoints e;
  ASSERT_TRUE(connect_endpoints(net, &e));
  std::vector<void*> sends;
  EXPECT_EQ(sends_posted(net, e, 12, &sends), 12);
  drain(net, e, sends);
  close_endpoints(net, e);
}

}  // namespace
}  // namespace nccom::net::testing
