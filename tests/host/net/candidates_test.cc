// The process's candidate order against a scripted runtime: the runtime's
// handle beats net.plugin, which beats the socket fallback; each choice is
// logged with why. Configuration comes from a Context built from a fake
// environment, so no process singleton is involved.
#include "build_paths.h"
#include "context_util.h"
#include "core/context.h"
#include "core/runtime.h"
#include "net/logger.h"
#include "net/selection.h"
#include "net_host_util.h"

#include <nccom/util/efa.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

namespace nccom::net::testing {
namespace {

// What the scripted nrt_get_libnccl_net answers.
struct RuntimeScript {
  void* handle = nullptr;
  int err = 0;
  const char* message = "";
  int calls = 0;
};
RuntimeScript g_script;

void* scripted_get_libnccl_net(int* err_out, char* err_msg, size_t err_msg_len) {
  ++g_script.calls;
  if (err_out != nullptr) *err_out = g_script.err;
  if (err_msg != nullptr && err_msg_len > 0) {
    std::strncpy(err_msg, g_script.message, err_msg_len - 1);
    err_msg[err_msg_len - 1] = '\0';
  }
  return g_script.handle;
}
void quiet_printk(char*, uint32_t, uint32_t) {}

class NetHostCandidates : public ::testing::Test {
 protected:
  void SetUp() override {
    g_script = RuntimeScript{};
    api_ = runtime::libnrt();
    api_.nrt_get_libnccl_net = &scripted_get_libnccl_net;
    api_.nec_ndl_printk = &quiet_printk;
    runtime::install_for_testing(&api_);
    env_["NCCL_DEBUG"] = "INFO";
    env_["NCCL_DEBUG_SUBSYS"] = "INIT,NET";
    env_["NCCL_DEBUG_FILE"] = log_.dir() + "/nccom.log";
    env_["NCCOM_PLUGIN_PATH"] = std::string(NET_HOST_NAMED_DIR) + ":" + NET_HOST_FALLBACK_DIR;
  }
  void TearDown() override {
    log::reset();
    runtime::install_for_testing(nullptr);
    if (g_script.handle != nullptr) dlclose(g_script.handle);
    std::remove((log_.dir() + "/nccom.log").c_str());
  }

  // Builds the context, the candidates, and runs the selection.
  Result<Selection> select_now() {
    auto context = context_with_env(&env_);
    EXPECT_TRUE(context) << context.error().message;
    if (!context) return context.take_error();
    candidates_ = process_candidates((*context)->config(), (*context)->plugin_dirs());
    return select_from(candidates_, plugin_logger());
  }

  void runtime_offers(const std::string& stem) {
    g_script.handle = dlopen(plugin_path(stem).c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(g_script.handle, nullptr) << dlerror();
  }

  std::string log_text() const { return context_log(log_.dir()); }
  bool logged(const std::string& needle) const {
    return log_text().find(needle) != std::string::npos;
  }

  LogCapture log_;  // owns the directory; the context reconfigures the logger into it
  runtime::Api api_{};
  std::map<std::string, std::string> env_;
  std::vector<Candidate> candidates_;
};

TEST_F(NetHostCandidates, ScriptedRuntimeHandleBeatsTomlAndFallback) {
  runtime_offers("nethost-neuron-v6");
  env_["NCCL_NET_PLUGIN"] = "lbnamed";
  auto chosen = select_now();
  ASSERT_TRUE(chosen) << chosen.error().message;
  ASSERT_EQ(candidates_.size(), 3u);
  EXPECT_EQ(chosen->reason, "handed over by the runtime (nrt_get_libnccl_net)");
  EXPECT_EQ(chosen->net->info().name, "loopback");
  // The file is named: the runtime's plugin and another of the same table
  // name must be told apart in the log.
  const std::string origin =
      "the runtime's libnccom-net.so (" + plugin_path("nethost-neuron-v6") + ")";
  EXPECT_EQ(chosen->net->info().origin, origin);
  EXPECT_TRUE(logged("NET/Plugin: using loopback (Neuron ncclNet_v6) from " + origin +
                     " with 1 device(s) (handed over by the runtime (nrt_get_libnccl_net))"))
      << log_text();
}

TEST_F(NetHostCandidates, ScriptedRuntimeWithoutHandleLetsTomlBeatFallback) {
  LogCapture scratch;
  const std::string file = scratch.dir() + "/nccom.toml";
  std::ofstream(file) << "[net]\nplugin = \"lbnamed\"\n";
  env_["NCCOM_CONFIG"] = file;
  auto chosen = select_now();
  ASSERT_TRUE(chosen) << chosen.error().message;
  EXPECT_EQ(candidates_.size(), 2u);
  EXPECT_EQ(chosen->net->info().name, "lbnamed");
  EXPECT_EQ(chosen->reason, "net.plugin from " + file + ":2");
  EXPECT_TRUE(logged("(net.plugin from " + file + ":2)")) << log_text();
  EXPECT_EQ(g_script.calls, 1);
  std::remove(file.c_str());
}

TEST_F(NetHostCandidates, ScriptedRuntimeErrorFallsBackToSocket) {
  g_script.err = 5;
  g_script.message = "no EFA device";
  auto chosen = select_now();
  ASSERT_TRUE(chosen) << chosen.error().message;
  EXPECT_EQ(chosen->net->info().name, "fake-socket");
  EXPECT_EQ(chosen->reason, "fallback: the runtime handed over no plugin and none configured");
  EXPECT_TRUE(logged("CCOM INFO NET/Plugin: libnccom-net.so load returned 5: no EFA device"))
      << log_text();
  EXPECT_TRUE(logged("(fallback: the runtime handed over no plugin and none configured)"))
      << log_text();
}

TEST_F(NetHostCandidates, ScriptedRuntimeHandleWithoutTableFallsBack) {
  runtime_offers("nethost-no-table");
  auto chosen = select_now();
  ASSERT_TRUE(chosen) << chosen.error().message;
  EXPECT_EQ(chosen->net->info().name, "fake-socket");
  EXPECT_EQ(chosen->reason, "fallback: the runtime's plugin was unusable and none configured");
  EXPECT_TRUE(logged("CCOM WARN NET/Plugin: cannot use the runtime's libnccom-net.so (" +
                     plugin_path("nethost-no-table") +
                     "): Failed to find ncclNetPlugin_v6 symbol."))
      << log_text();
}

// Where EFA is present (net.efa = yes), the runtime's plugin failing its
// init is a WARN.
TEST_F(NetHostCandidates, ScriptedRuntimeWhosePluginFailsInitFallsBackToToml) {
  runtime_offers("nethost-init-fails");
  env_["NCCL_NET_PLUGIN"] = plugin_path("nethost-neuron-v5");
  env_["NCCOM_NET_EFA"] = "yes";
  auto chosen = select_now();
  ASSERT_TRUE(chosen) << chosen.error().message;
  EXPECT_EQ(chosen->net->info().version, 5);
  EXPECT_EQ(chosen->reason, "net.plugin from env NCCL_NET_PLUGIN");
  EXPECT_TRUE(
      logged("CCOM WARN OFI plugin initNet() failed is EFA enabled? init-fails (Neuron "
             "ncclNet_v6) from the runtime's libnccom-net.so (" +
             plugin_path("nethost-init-fails") +
             "): init returned 3 (ncclInternalError); trying the next candidate (on machines "
             "without EFA"))
      << log_text();
}

// Where EFA is absent, the same failure is expected: an INFO saying so, and
// no WARN of the host's.
TEST_F(NetHostCandidates, RuntimePluginFailingWithoutEfaIsAnInfo) {
  runtime_offers("nethost-init-fails");
  env_["NCCOM_NET_EFA"] = "no";
  auto chosen = select_now();
  ASSERT_TRUE(chosen) << chosen.error().message;
  EXPECT_EQ(chosen->net->info().name, "fake-socket");
  EXPECT_TRUE(
      logged("CCOM INFO OFI plugin initNet() failed is EFA enabled? init-fails (Neuron "
             "ncclNet_v6) from the runtime's libnccom-net.so (" +
             plugin_path("nethost-init-fails") +
             "): init returned 3 (ncclInternalError); expected here: net.efa is no (env "
             "NCCOM_NET_EFA), this host has no EFA device; trying the next candidate"))
      << log_text();
  // (The test plugin's own "init-fails: no network" is its WARN, not the host's.)
  EXPECT_FALSE(logged("CCOM WARN OFI plugin")) << log_text();
  EXPECT_FALSE(logged("CCOM WARN NET/Plugin")) << log_text();
}

// A plugin the operator named that fails is a WARN wherever it runs: only
// the runtime's EFA plugin is expected to fail where EFA is absent.
TEST_F(NetHostCandidates, NamedPluginFailingWithoutEfaIsStillAWarn) {
  env_["NCCOM_NET_EFA"] = "no";
  env_["NCCL_NET_PLUGIN"] = plugin_path("nethost-init-fails");
  auto chosen = select_now();
  ASSERT_TRUE(chosen) << chosen.error().message;
  EXPECT_EQ(chosen->net->info().name, "fake-socket");
  EXPECT_TRUE(
      logged("CCOM WARN OFI plugin initNet() failed is EFA enabled? init-fails (Neuron "
             "ncclNet_v6) from " +
             plugin_path("nethost-init-fails") +
             ": init returned 3 (ncclInternalError); trying the next candidate"))
      << log_text();
}

// net.efa = auto asks sysfs: a device whose device/driver link names the
// efa driver is EFA; other RDMA devices, a missing directory are not.
TEST(NetHostEfa, AutoLooksForADeviceBoundToTheEfaDriver) {
  LogCapture scratch;  // a fresh directory
  const std::filesystem::path root = scratch.dir();
  const std::filesystem::path cls = root / "class" / "infiniband";
  const auto device = [&](const std::string& name, const std::string& driver) {
    std::filesystem::create_directories(root / "drivers" / driver);
    std::filesystem::create_directories(cls / name / "device");
    std::filesystem::create_directory_symlink(root / "drivers" / driver,
                                              cls / name / "device" / "driver");
  };
  const std::string missing = (root / "none").string();
  EXPECT_EQ(efa_device(missing), "");
  EXPECT_EQ(efa_absence("auto", "default", missing),
            "expected here: this host has no EFA device (none under " + missing +
                " is bound to the efa driver; net.efa is auto)");
  device("mlx5_0", "mlx5_core");
  EXPECT_EQ(efa_device(cls.string()), "");
  EXPECT_NE(efa_absence("AUTO", "default", cls.string()), "");
  device("rdmap16s27", "efa");
  EXPECT_EQ(efa_device(cls.string()), "rdmap16s27");
  EXPECT_EQ(efa_absence("auto", "default", cls.string()), "");
  // yes and no are taken as said, whatever sysfs shows.
  EXPECT_EQ(efa_absence("yes", "env NCCOM_NET_EFA", missing), "");
  EXPECT_EQ(efa_absence("no", "cluster dev /x.toml:3", cls.string()),
            "expected here: net.efa is no (cluster dev /x.toml:3), this host has no EFA device");
  std::filesystem::remove_all(root / "class");
  std::filesystem::remove_all(root / "drivers");
}

TEST_F(NetHostCandidates, RuntimePluginCanBeSwitchedOff) {
  runtime_offers("nethost-neuron-v6");
  env_["NCCOM_NET_USE_RUNTIME_PLUGIN"] = "false";
  env_["NCCL_NET_PLUGIN"] = "lbshort";
  auto chosen = select_now();
  ASSERT_TRUE(chosen) << chosen.error().message;
  EXPECT_EQ(chosen->net->info().name, "lbshort");
  EXPECT_EQ(g_script.calls, 0) << "the runtime is not even asked";
  EXPECT_TRUE(logged("net.use_runtime_plugin is false")) << log_text();
}

TEST_F(NetHostCandidates, ASwitchedOffRuntimePluginIsSaidSoInTheFallbackReason) {
  runtime_offers("nethost-neuron-v6");
  env_["NCCOM_NET_USE_RUNTIME_PLUGIN"] = "false";
  auto chosen = select_now();
  ASSERT_TRUE(chosen) << chosen.error().message;
  EXPECT_EQ(chosen->net->info().name, "fake-socket");
  EXPECT_EQ(chosen->reason,
            "fallback: the runtime's plugin is not used (net.use_runtime_plugin = false) and none "
            "configured");
  EXPECT_TRUE(logged(
      "(fallback: the runtime's plugin is not used (net.use_runtime_plugin = false) and none "
      "configured)"))
      << log_text();
}

TEST_F(NetHostCandidates, NvidiaLayoutOnlyWhenConfigured) {
  env_["NCCL_NET_PLUGIN"] = plugin_path("nethost-nvidia-v6");
  auto refused = select_now();
  ASSERT_TRUE(refused) << refused.error().message;
  EXPECT_EQ(refused->net->info().name, "fake-socket") << "refused, so the fallback wins";
  EXPECT_TRUE(logged("net.plugin_layout = \"nvidia\"")) << log_text();

  env_["NCCOM_NET_PLUGIN_LAYOUT"] = "NVIDIA";  // any letter case
  auto chosen = select_now();
  ASSERT_TRUE(chosen) << chosen.error().message;
  EXPECT_EQ(chosen->net->info().layout, Layout::kNvidia);
  EXPECT_EQ(chosen->reason, "net.plugin from env NCCL_NET_PLUGIN, NVIDIA layout");
}

TEST_F(NetHostCandidates, ConfiguredSocketIsNotListedTwice) {
  env_["NCCL_NET_PLUGIN"] = "socket";
  auto chosen = select_now();
  ASSERT_TRUE(chosen) << chosen.error().message;
  ASSERT_EQ(candidates_.size(), 1u);
  EXPECT_EQ(chosen->net->info().name, "fake-socket");
  EXPECT_EQ(chosen->reason, "net.plugin from env NCCL_NET_PLUGIN");
}

}  // namespace
}  // namespace nccom::net::testing
