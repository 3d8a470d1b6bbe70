// The host hands the socket knobs to the real socket plugin (plugins/socket)
// through its nccomNetConfig before init: the plugin's own log line and
// the sockets and helper threads a connection really opens show what it took.
#include "build_paths.h"
#include "child_process.h"
#include "context_util.h"
#include "core/context.h"
#include "core/runtime.h"
#include "net/logger.h"
#include "net/selection.h"
#include "net_host_util.h"

#include <nccom/net_config.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>

namespace nccom::net::testing {
namespace {

void* no_runtime_net(int* err, char*, size_t) {
  if (err != nullptr) *err = 0;
  return nullptr;
}
void quiet_printk(char*, uint32_t, uint32_t) {}

// Open file descriptors of this process that are sockets.
int socket_fds() {
  int n = 0;
  std::error_code ec;
  for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    std::error_code link_ec;
    auto target = std::filesystem::read_symlink(fd.path(), link_ec);
    if (!link_ec && target.string().rfind("socket:", 0) == 0) ++n;
  }
  return n;
}

int threads() { return nccom_test::thread_count(); }

// One `size`-byte message from e.send to e.recv, checked. The socket plugin
// moves data on its helper threads, so completion is awaited by time (10 s),
// not by a count of polls.
::testing::AssertionResult timed_exchange(Net& net, Endpoints& e, int size) {
  std::vector<unsigned char> out(static_cast<std::size_t>(size)), in(out.size(), 0);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<unsigned char>(i * 7 + 1);
  void *send_mr = nullptr, *recv_mr = nullptr;
  if (net.reg_mr(e.send, out.data(), out.size(), NCCL_PTR_HOST, &send_mr) != ncclSuccess ||
      net.reg_mr(e.recv, in.data(), in.size(), NCCL_PTR_HOST, &recv_mr) != ncclSuccess)
    return ::testing::AssertionFailure() << "regMr failed";
  void *send_req = nullptr, *recv_req = nullptr;
  void* data[1] = {in.data()};
  int sizes[1] = {size};
  int tags[1] = {0};
  void* mhandles[1] = {recv_mr};
  if (net.isend(e.send, out.data(), size, 0, send_mr, &send_req) != ncclSuccess ||
      net.irecv(e.recv, 1, data, sizes, tags, mhandles, &recv_req) != ncclSuccess ||
      send_req == nullptr || recv_req == nullptr)
    return ::testing::AssertionFailure() << "isend/irecv failed";
  int send_done = 0, recv_done = 0, received = -1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while ((!send_done || !recv_done) && std::chrono::steady_clock::now() < deadline) {
    if (!send_done && net.test(send_req, &send_done, nullptr) != ncclSuccess)
      return ::testing::AssertionFailure() << "test(send) failed";
    if (!recv_done && net.test(recv_req, &recv_done, &received) != ncclSuccess)
      return ::testing::AssertionFailure() << "test(recv) failed";
  }
  if (!send_done || !recv_done) return ::testing::AssertionFailure() << "not done in 10 s";
  if (received != size) return ::testing::AssertionFailure() << "received " << received;
  if (in != out) return ::testing::AssertionFailure() << "payload differs";
  if (net.dereg_mr(e.send, send_mr) != ncclSuccess || net.dereg_mr(e.recv, recv_mr) != ncclSuccess)
    return ::testing::AssertionFailure() << "deregMr failed";
  return ::testing::AssertionSuccess();
}

class NetHostSocketConfig : public ::testing::Test {
 protected:
  void SetUp() override {
    api_ = runtime::libnrt();
    api_.nrt_get_libnccl_net = &no_runtime_net;
    api_.nec_ndl_printk = &quiet_printk;
    runtime::install_for_testing(&api_);
    const std::string plugin = NET_HOST_SOCKET_PLUGIN;
    env_["NCCL_DEBUG"] = "INFO";
    env_["NCCL_DEBUG_SUBSYS"] = "INIT,NET";
    env_["NCCL_DEBUG_FILE"] = log_.dir() + "/nccom.log";
    env_["NCCOM_PLUGIN_PATH"] = plugin.substr(0, plugin.rfind('/'));
    env_["NCCL_SOCKET_IFNAME"] = "lo";
  }
  void TearDown() override {
    log::reset();
    runtime::install_for_testing(nullptr);
    std::remove((log_.dir() + "/nccom.log").c_str());
  }

  Result<std::unique_ptr<core::Context>> context() { return context_with_env(&env_); }

  Result<Selection> select_now() {
    auto ctx = context();
    EXPECT_TRUE(ctx) << ctx.error().message;
    if (!ctx) return ctx.take_error();
    return select_from(process_candidates((*ctx)->config(), (*ctx)->plugin_dirs()),
                       plugin_logger());
  }

  std::string log_text() const { return context_log(log_.dir()); }
  bool logged(const std::string& needle) const {
    return log_text().find(needle) != std::string::npos;
  }

  // Selects, connects one pair over the loopback, moves `bytes` (striped over
  // the data sockets when large), and reports what the connection opened.
  void connect_and_count(int* sockets_opened, int* threads_started) {
    auto chosen = select_now();
    ASSERT_TRUE(chosen) << chosen.error().message;
    ASSERT_EQ(chosen->net->info().name, "Socket");
    Net& net = *chosen->net;
    const int sockets_before = socket_fds();
    const int threads_before = threads();
    Endpoints e;
    ASSERT_TRUE(connect_endpoints(net, &e));
    *sockets_opened = socket_fds() - sockets_before;
    *threads_started = threads() - threads_before;
    EXPECT_TRUE(timed_exchange(net, e, 1 << 20));
    close_endpoints(net, e);
    EXPECT_EQ(net.fini(), ncclSuccess);
  }

  LogCapture log_;
  runtime::Api api_{};
  std::map<std::string, std::string> env_;
};

TEST_F(NetHostSocketConfig, KnobsReachThePluginBeforeInit) {
  env_["NCCL_NSOCKS_PERTHREAD"] = "3";
  env_["NCCL_SOCKET_NTHREADS"] = "2";
  int sockets = 0, started = 0;
  connect_and_count(&sockets, &started);
  // listen 1; each side 1 control + 3 x 2 data sockets.
  EXPECT_EQ(sockets, 1 + 2 * (1 + 3 * 2));
  EXPECT_EQ(started, 2 * 2) << "two helper threads per comm, send and receive side";
  EXPECT_TRUE(
      logged("configured through nccomNetConfig: plugins.socket.nsocks_per_thread = 3 "
             "(from env NCCL_NSOCKS_PERTHREAD), plugins.socket.nthreads = 2 (from env "
             "NCCL_SOCKET_NTHREADS)"))
      << log_text();
  EXPECT_TRUE(logged("NET/Socket : init: nsocks_per_thread 3, nthreads 2, interfaces \"lo\""))
      << log_text();
}

TEST_F(NetHostSocketConfig, DefaultsGiveOneSocketAndOneThread) {
  int sockets = 0, started = 0;
  connect_and_count(&sockets, &started);
  EXPECT_EQ(sockets, 1 + 2 * (1 + 1));
  EXPECT_EQ(started, 2);
  EXPECT_TRUE(
      logged("plugins.socket.nsocks_per_thread = 1 (from default), plugins.socket.nthreads = 1 "
             "(from default)"))
      << log_text();
  EXPECT_TRUE(logged("NET/Socket : init: nsocks_per_thread 1, nthreads 1")) << log_text();
}

TEST_F(NetHostSocketConfig, TooManySocketsIsAClearErrorAtSelection) {
  env_["NCCL_NSOCKS_PERTHREAD"] = "64";  // each within its knob's range,
  env_["NCCL_SOCKET_NTHREADS"] = "2";    // 128 sockets in all is not
  auto chosen = select_now();
  ASSERT_FALSE(chosen);
  EXPECT_EQ(chosen.error().status, NRT_INVALID);
  // The file is named (the fallback resolved in the plugin directories), the
  // plugin's own reason and every value with its source.
  const std::string& message = chosen.error().message;
  EXPECT_NE(message.find("NET/Plugin: Socket (Neuron ncclNet_v6) from " +
                         std::filesystem::weakly_canonical(NET_HOST_SOCKET_PLUGIN).string() +
                         " refused its settings in configure (status 3): nsocks_per_thread 64 x "
                         "nthreads 2: each count must be at least 1 and nsocks_per_thread x "
                         "nthreads at most 64 data sockets per connection"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("plugins.socket.nsocks_per_thread = 64 (from env NCCL_NSOCKS_PERTHREAD)"),
            std::string::npos)
      << message;
  EXPECT_TRUE(logged("cannot use the fallback plugin \"socket\"")) << log_text();
  EXPECT_FALSE(logged("NET/Socket : init:")) << "the plugin's init must not run";
}

TEST_F(NetHostSocketConfig, OutOfRangeCountIsRefusedWithTheKnobName) {
  env_["NCCL_SOCKET_NTHREADS"] = "17";
  auto chosen = select_now();
  ASSERT_FALSE(chosen);
  EXPECT_EQ(chosen.error().status, NRT_INVALID);
  EXPECT_NE(
      chosen.error().message.find("NCCL_SOCKET_NTHREADS=\"17\": expected an integer in 1..16 (for "
                                  "plugins.socket.nthreads)"),
      std::string::npos)
      << chosen.error().message;
  EXPECT_FALSE(logged("NET/Socket : init:")) << "the plugin's init must not run";
}

TEST_F(NetHostSocketConfig, TheFilesPluginSectionConfiguresThePlugin) {
  const std::string file = log_.dir() + "/socket.toml";
  {
    std::FILE* f = std::fopen(file.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("[plugins.socket]\nnsocks_per_thread = 2\nnthreads = 2\n", f);
    std::fclose(f);
  }
  env_["NCCOM_CONFIG"] = file;
  int sockets = 0, started = 0;
  connect_and_count(&sockets, &started);
  std::remove(file.c_str());
  EXPECT_EQ(sockets, 1 + 2 * (1 + 2 * 2));
  EXPECT_EQ(started, 2 * 2);
  EXPECT_TRUE(logged("plugins.socket.nsocks_per_thread = 2 (from " + file + ":2)")) << log_text();
}

TEST_F(NetHostSocketConfig, PluginWithoutTheEntryPointIsLeftAlone) {
  env_["NCCOM_PLUGIN_PATH"] = NET_HOST_FALLBACK_DIR;  // a loopback standing in for socket
  env_["NCCL_SOCKET_NTHREADS"] = "2";
  auto chosen = select_now();
  ASSERT_TRUE(chosen) << chosen.error().message;
  EXPECT_EQ(chosen->net->info().name, "fake-socket");
  EXPECT_EQ(chosen->net->symbol(NCCOM_NET_CONFIG_SYMBOL), nullptr);
  EXPECT_FALSE(logged("configured through nccomNetConfig")) << log_text();
}

}  // namespace
}  // namespace nccom::net::testing
