// The host hands the libfabric plugin's knobs (net.ofi_*) to a plugin that
// exports nccomOfiConfigure / nccomOfiConfigureLiveness, before its init,
// whichever way the plugin was chosen — here as the runtime's
// libnccom-net.so. The stand-in (plugins/ofi_configure.c) records what it
// was given and whether init had run.
#include "context_util.h"
#include "core/context.h"
#include "core/runtime.h"
#include "net/logger.h"
#include "net/selection.h"
#include "net_host_util.h"

#include <map>
#include <tuple>

namespace nccom::net::testing {
namespace {

struct OfiConfStats {  // plugins/ofi_configure.c's ofi_conf_stats_t
  int rails_calls;
  int rails;
  int rails_init_calls;
  int liveness_calls;
  int enabled;
  int check_ms;
  int grace_ms;
  int liveness_init_calls;
};

void* g_runtime_handle = nullptr;
void* runtime_net(int* err, char*, size_t) {
  if (err != nullptr) *err = 0;
  return g_runtime_handle;
}
void quiet_printk(char*, uint32_t, uint32_t) {}

class NetHostOfiConfig : public ::testing::Test {
 protected:
  void SetUp() override {
    api_ = runtime::libnrt();
    api_.nrt_get_libnccl_net = &runtime_net;
    api_.nec_ndl_printk = &quiet_printk;
    runtime::install_for_testing(&api_);
    env_["NCCL_DEBUG"] = "INFO";
    env_["NCCL_DEBUG_SUBSYS"] = "INIT,NET";
    env_["NCCL_DEBUG_FILE"] = log_.dir() + "/nccom.log";
    env_["NCCOM_PLUGIN_PATH"] = NET_HOST_FALLBACK_DIR;
  }
  void TearDown() override {
    log::reset();
    runtime::install_for_testing(nullptr);
    selected_.reset();  // before its library goes (a selected plugin is not unloaded)
    if (g_runtime_handle != nullptr) dlclose(g_runtime_handle);
    g_runtime_handle = nullptr;
    std::remove((log_.dir() + "/nccom.log").c_str());
  }

  // The runtime offers the stand-in `stem`; its counters start at zero.
  void runtime_offers(const std::string& stem) {
    g_runtime_handle = dlopen(plugin_path(stem).c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(g_runtime_handle, nullptr) << dlerror();
    stats_ = static_cast<OfiConfStats*>(dlsym(g_runtime_handle, "ofi_conf_stats"));
    loopback_ = static_cast<lb_stats_t*>(dlsym(g_runtime_handle, "loopback_stats"));
    ASSERT_NE(stats_, nullptr);
    ASSERT_NE(loopback_, nullptr);
    *stats_ = OfiConfStats{};
    *loopback_ = lb_stats_t{};
  }

  Result<Selection> select_now() {
    auto context = context_with_env(&env_);
    EXPECT_TRUE(context) << context.error().message;
    if (!context) return context.take_error();
    return select_from(process_candidates((*context)->config(), (*context)->plugin_dirs()),
                       plugin_logger());
  }

  // The context logs where NCCL_DEBUG_FILE (set above) says.
  std::string log_text() const { return context_log(log_.dir()); }
  bool logged(const std::string& needle) const {
    return log_text().find(needle) != std::string::npos;
  }

  LogCapture log_;
  runtime::Api api_{};
  std::map<std::string, std::string> env_;
  OfiConfStats* stats_ = nullptr;
  lb_stats_t* loopback_ = nullptr;
  std::unique_ptr<Net> selected_;
};

TEST_F(NetHostOfiConfig, DefaultsReachThePluginBeforeInit) {
  runtime_offers("nethost-ofi-conf");
  auto chosen = select_now();
  ASSERT_TRUE(chosen) << chosen.error().message;
  EXPECT_EQ(chosen->net->info().name, "ofi-conf");
  EXPECT_EQ(stats_->rails_calls, 1);
  EXPECT_EQ(stats_->rails, 1);
  EXPECT_EQ(stats_->liveness_calls, 1);
  EXPECT_EQ(stats_->enabled, 1);
  EXPECT_EQ(stats_->check_ms, 100);
  EXPECT_EQ(stats_->grace_ms, 500);
  EXPECT_EQ(stats_->rails_init_calls, 0) << "nccomOfiConfigure must come before init";
  EXPECT_EQ(stats_->liveness_init_calls, 0) << "nccomOfiConfigureLiveness must come before init";
  EXPECT_EQ(loopback_->init_calls, 1);
  EXPECT_TRUE(logged("configured by nccomOfiConfigure: net.ofi_rails = 1 (from default)"))
      << log_text();
  EXPECT_TRUE(
      logged("configured by nccomOfiConfigureLiveness: net.ofi_liveness = true (from "
             "default), net.ofi_liveness_check_ms = 100 (from default), "
             "net.ofi_liveness_grace_ms = 500 (from default)"))
      << log_text();
  EXPECT_EQ(chosen->net->fini(), ncclSuccess);
  selected_ = std::move(chosen->net);
}

TEST_F(NetHostOfiConfig, EnvironmentValuesArePassedThrough) {
  env_["NCCOM_OFI_RAILS"] = "4";
  env_["NCCOM_OFI_LIVENESS"] = "0";
  env_["NCCOM_OFI_LIVENESS_CHECK_MS"] = "250";
  env_["NCCOM_OFI_LIVENESS_GRACE_MS"] = "0";
  runtime_offers("nethost-ofi-conf");
  auto chosen = select_now();
  ASSERT_TRUE(chosen) << chosen.error().message;
  EXPECT_EQ(stats_->rails, 4);
  EXPECT_EQ(stats_->enabled, 0);
  EXPECT_EQ(stats_->check_ms, 250);
  EXPECT_EQ(stats_->grace_ms, 0);
  EXPECT_TRUE(logged("net.ofi_rails = 4 (from env NCCOM_OFI_RAILS)")) << log_text();
  EXPECT_TRUE(
      logged("net.ofi_liveness = false (from env NCCOM_OFI_LIVENESS), "
             "net.ofi_liveness_check_ms = 250 (from env NCCOM_OFI_LIVENESS_CHECK_MS), "
             "net.ofi_liveness_grace_ms = 0 (from env NCCOM_OFI_LIVENESS_GRACE_MS)"))
      << log_text();
  EXPECT_EQ(chosen->net->fini(), ncclSuccess);
  selected_ = std::move(chosen->net);
}

TEST_F(NetHostOfiConfig, OnlyTheExportedCallIsMade) {
  runtime_offers("nethost-ofi-rails-only");
  auto chosen = select_now();
  ASSERT_TRUE(chosen) << chosen.error().message;
  EXPECT_EQ(stats_->rails_calls, 1);
  EXPECT_EQ(stats_->liveness_calls, 0);
  EXPECT_FALSE(logged("nccomOfiConfigureLiveness")) << log_text();
  EXPECT_EQ(chosen->net->fini(), ncclSuccess);
  selected_ = std::move(chosen->net);
}

TEST_F(NetHostOfiConfig, PluginWithoutTheExportsIsLeftAlone) {
  // The fallback stand-in exports neither call: selected, nothing logged.
  auto chosen = select_now();
  ASSERT_TRUE(chosen) << chosen.error().message;
  EXPECT_EQ(chosen->net->info().name, "fake-socket");
  EXPECT_FALSE(logged("nccomOfiConfigure")) << log_text();
  EXPECT_EQ(chosen->net->fini(), ncclSuccess);
  selected_ = std::move(chosen->net);
}

TEST_F(NetHostOfiConfig, RefusalRejectsThePluginBeforeInitAndNamesTheKnob) {
  env_["NCCOM_OFI_RAILS"] = "2";
  runtime_offers("nethost-ofi-refuses");
  auto chosen = select_now();
  ASSERT_TRUE(chosen) << chosen.error().message;
  EXPECT_EQ(chosen->net->info().name, "fake-socket") << "the next candidate is used";
  EXPECT_EQ(stats_->rails_calls, 1);
  EXPECT_EQ(loopback_->init_calls, 0) << "a refused plugin's init must not run";
  EXPECT_TRUE(
      logged("refused net.ofi_rails = 2 (from env NCCOM_OFI_RAILS) in nccomOfiConfigure: "
             "4 (ncclInvalidArgument); rails must be 1 to 64"))
      << log_text();
  EXPECT_EQ(chosen->net->fini(), ncclSuccess);
  selected_ = std::move(chosen->net);
}

TEST_F(NetHostOfiConfig, OutOfRangeValuesAreRefusedByTheKnobTable) {
  for (const auto& [env, value, key] :
       {std::tuple{"NCCOM_OFI_RAILS", "65", "net.ofi_rails"},
        std::tuple{"NCCOM_OFI_LIVENESS_CHECK_MS", "0", "net.ofi_liveness_check_ms"},
        std::tuple{"NCCOM_OFI_LIVENESS_GRACE_MS", "600001", "net.ofi_liveness_grace_ms"},
        std::tuple{"NCCOM_OFI_LIVENESS", "maybe", "net.ofi_liveness"}}) {
    std::map<std::string, std::string> saved = env_;
    env_[env] = value;
    auto context = context_with_env(&env_);
    ASSERT_FALSE(context) << env << "=" << value;
    EXPECT_NE(context.error().message.find(key), std::string::npos) << context.error().message;
    env_ = saved;
  }
}

}  // namespace
}  // namespace nccom::net::testing
