#include "net_ofi_fixture.h"

#include "build_paths.h"
#include "child_process.h"
#include "machine.h"
#include "machine_fabric.h"
#include "net_config_call.h"

#include <dirent.h>
#include <dlfcn.h>

#include <rdma/fabric.h>

#include <cctype>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace net_ofi_test {
namespace {

// What the plugin asks of a provider (plugins/net_neuron/ofi/provider.cc),
// and what it needs on top for RMA.
constexpr uint64_t kPluginCaps = FI_MSG | FI_TAGGED;
constexpr uint64_t kRmaCaps = FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;

std::mutex g_log_mutex;
std::vector<std::string> g_logs;

}  // namespace

const PluginTables& plugin() {
  static PluginTables tables = [] {
    PluginTables t;
    t.library = dlopen(NET_OFI_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    if (t.library == nullptr) return t;
    t.v6 = static_cast<const ncclNet_v6_t*>(dlsym(t.library, NCCL_NET_PLUGIN_SYMBOL_V6));
    t.v5 = static_cast<const ncclNet_v5_t*>(dlsym(t.library, NCCL_NET_PLUGIN_SYMBOL_V5));
    t.v4 = static_cast<const ncclNet_v4_t*>(dlsym(t.library, NCCL_NET_PLUGIN_SYMBOL_V4));
    nccom_test::NetConfigCall call(t.library);
    if (call.valid()) {
      t.configure = [call](int rails) { return call({{"rails", std::to_string(rails)}}); };
      t.configure_liveness = [call](int enabled, int check_ms, int grace_ms) {
        const std::string on = enabled == 1   ? "true"
                               : enabled == 0 ? "false"
                                              : std::to_string(enabled);
        return call({{"liveness", on},
                     {"liveness_check_ms", std::to_string(check_ms)},
                     {"liveness_grace_ms", std::to_string(grace_ms)}});
      };
    }
    return t;
  }();
  EXPECT_NE(tables.library, nullptr) << NET_OFI_PLUGIN << ": " << dlerror();
  return tables;
}

void capture_logger(ncclDebugLogLevel level, unsigned long, const char*, int, const char* fmt,
                    ...) {
  if (fmt == nullptr) return;
  char text[2048];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(text, sizeof text, fmt, args);
  va_end(args);
  std::lock_guard lock(g_log_mutex);
  g_logs.push_back((level == NCCL_LOG_WARN ? "WARN " : "INFO ") + std::string(text));
}

std::string captured_logs() {
  std::lock_guard lock(g_log_mutex);
  std::string all;
  for (const std::string& line : g_logs) all += line + "\n";
  return all;
}

bool logs_contain(const std::string& text) {
  return captured_logs().find(text) != std::string::npos;
}

void clear_logs() {
  std::lock_guard lock(g_log_mutex);
  g_logs.clear();
}

std::string selected_provider() {
  const std::string logs = captured_logs();
  const std::string marker = "Selected provider is ";
  size_t at = logs.find(marker);
  if (at == std::string::npos) return "";
  at += marker.size();
  return logs.substr(at, logs.find(',', at) - at);
}

int open_fd_count() { return nccom_test::open_fd_count(); }
int thread_count() { return nccom_test::thread_count(); }

bool wait_all(const ncclNet_v6_t* net, std::vector<Pending*> pending,
              std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    bool all = true;
    for (Pending* p : pending) {
      if (p->done || p->rc != ncclSuccess) continue;
      int done = 0;
      int size = -1;
      p->rc = net->test(p->request, &done, &size);
      if (p->rc == ncclSuccess && done != 0) {
        p->done = true;
        p->size = size;
      }
      all = all && (p->done || p->rc != ncclSuccess);
    }
    if (all) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
}

namespace {

// The FI_PROVIDER of the first init in this process: libfabric applies the
// one it reads at its own init for the rest of the process.
std::string& first_provider() {
  static std::string first;
  return first;
}

}  // namespace

void NetOfiProvider::SetUp() {
  net = plugin().v6;
  ASSERT_NE(net, nullptr);
  // Asked of libfabric in a process of its own, before the plugin's init.
  if (std::string lack = nccom_test::machine::libfabric_provider(GetParam(), kPluginCaps);
      !lack.empty())
    NCCOM_SKIP_MACHINE_LACKS(kLibfabricProvider) << lack;
  clear_logs();
  setenv("FI_PROVIDER", GetParam().c_str(), 1);
  ASSERT_EQ(net->init(capture_logger), ncclSuccess)
      << "libfabric offers " << GetParam() << " (FI_EP_RDM, tagged messages)\n"
      << captured_logs();
  initialized_ = true;
  if (first_provider().empty()) first_provider() = GetParam();
  ASSERT_EQ(selected_provider(), GetParam())
      << "libfabric offers " << GetParam() << " (FI_EP_RDM, tagged messages), yet the plugin "
      << "selected another provider"
      << (first_provider() != GetParam()
              ? "; libfabric keeps the FI_PROVIDER of its first init in this process (" +
                    first_provider() +
                    ", an earlier case): run one provider per process, as ctest does"
              : std::string())
      << "\n"
      << captured_logs();
  ASSERT_EQ(net->devices(&ndev), ncclSuccess);
  ASSERT_GE(ndev, 1);
  ASSERT_EQ(net->getProperties(0, &props), ncclSuccess);
}

std::string NetOfiProvider::machine_lacks_rma() const {
  return nccom_test::machine::libfabric_provider(GetParam(), kPluginCaps | kRmaCaps);
}

void NetOfiProvider::TearDown() {
  if (initialized_) {
    EXPECT_EQ(net->fini(), ncclSuccess);
  }
  // Tests that change the liveness knobs must not leak them into the next
  // test when the whole binary runs in one process.
  if (plugin().configure_liveness != nullptr) {
    EXPECT_EQ(plugin().configure_liveness(1, kLivenessCheckMs, kLivenessGraceMs), ncclSuccess);
  }
}

CommPair NetOfiProvider::connect_pair(int dev) {
  CommPair pair;
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  EXPECT_EQ(net->listen(dev, handle, &pair.listen), ncclSuccess) << captured_logs();
  if (pair.listen == nullptr) return pair;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while ((pair.send == nullptr || pair.recv == nullptr) &&
         std::chrono::steady_clock::now() < deadline) {
    if (pair.send == nullptr) {
      EXPECT_EQ(net->connect(dev, handle, &pair.send), ncclSuccess) << captured_logs();
    }
    if (pair.recv == nullptr) {
      EXPECT_EQ(net->accept(pair.listen, &pair.recv), ncclSuccess) << captured_logs();
    }
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_NE(pair.send, nullptr) << "connect never completed\n" << captured_logs();
  EXPECT_NE(pair.recv, nullptr) << "accept never completed\n" << captured_logs();
  return pair;
}

void NetOfiProvider::close_pair(CommPair& pair) {
  if (pair.send != nullptr) {
    EXPECT_EQ(net->closeSend(pair.send), ncclSuccess);
  }
  if (pair.recv != nullptr) {
    EXPECT_EQ(net->closeRecv(pair.recv), ncclSuccess);
  }
  if (pair.listen != nullptr) {
    EXPECT_EQ(net->closeListen(pair.listen), ncclSuccess);
  }
  pair = CommPair{};
}

int NetOfiProvider::send_recv(const CommPair& pair, void* sbuf, int ssize, void* smh, void* rbuf,
                              int rsize, void* rmh, int tag) {
  Pending send;
  Pending recv;
  EXPECT_EQ(net->isend(pair.send, sbuf, ssize, tag, smh, &send.request), ncclSuccess);
  EXPECT_EQ(net->irecv(pair.recv, 1, &rbuf, &rsize, &tag, &rmh, &recv.request), ncclSuccess);
  EXPECT_NE(send.request, nullptr);
  EXPECT_NE(recv.request, nullptr);
  if (send.request == nullptr || recv.request == nullptr) return -1;
  EXPECT_TRUE(wait_all(net, {&send, &recv})) << captured_logs();
  EXPECT_EQ(send.rc, ncclSuccess) << captured_logs();
  EXPECT_EQ(recv.rc, ncclSuccess) << captured_logs();
  EXPECT_TRUE(send.done && recv.done);
  return recv.size;
}

std::string provider_test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name;
  for (char c : info.param) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

}  // namespace net_ofi_test

namespace net_ofi_test {

// Every TEST_P of NetOfiProvider, in every file, runs once per provider.
INSTANTIATE_TEST_SUITE_P(Providers, NetOfiProvider, ::testing::Values("tcp;ofi_rxm", "shm", "tcp"),
                         provider_test_name);

}  // namespace net_ofi_test
