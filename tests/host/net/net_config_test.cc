// An ncclNet plugin that exports nccomNetConfig (nccom/net_config.h) gets its
// own knobs resolved — default, [plugins.<name>], the active cluster's
// section, the environment — and its configure() called before its init,
// whichever way the plugin was chosen: here as the runtime's libnccom-net.so.
// The stand-in (plugins/net_config.c) records what it was handed and whether
// init had run; a bad value, a bad table or a refusal ends the selection with
// a message naming the plugin and the key.
#include "net/net_config.h"

#include "build_paths.h"
#include "config/plugin_knobs.h"
#include "context_util.h"
#include "core/context.h"
#include "core/runtime.h"
#include "net/logger.h"
#include "net/selection.h"
#include "net_host_util.h"

#include <cstdio>
#include <map>
#include <tuple>

namespace nccom::net::testing {
namespace {

struct NetConfigStats {  // plugins/net_config.c's net_config_stats_t
  int configure_calls;
  int init_calls_at_configure;
  char rails[32];
  char liveness[32];
  char check_ms[32];
  char grace_ms[32];
  char ifname[64];
};

void* g_runtime_handle = nullptr;
void* runtime_net(int* err, char*, size_t) {
  if (err != nullptr) *err = 0;
  return g_runtime_handle;
}
void quiet_printk(char*, uint32_t, uint32_t) {}

class NetHostNetConfig : public ::testing::Test {
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
    if (!config_path_.empty()) std::remove(config_path_.c_str());
  }

  // The runtime offers the stand-in `stem`; its counters start at zero.
  void runtime_offers(const std::string& stem) {
    g_runtime_handle = dlopen(plugin_path(stem).c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(g_runtime_handle, nullptr) << dlerror();
    stats_ = static_cast<NetConfigStats*>(dlsym(g_runtime_handle, "net_config_stats"));
    loopback_ = static_cast<lb_stats_t*>(dlsym(g_runtime_handle, "loopback_stats"));
    ASSERT_NE(stats_, nullptr);
    ASSERT_NE(loopback_, nullptr);
    *stats_ = NetConfigStats{};
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
  // Writes `text` as the configuration file and points NCCOM_CONFIG at it.
  void config_file(const std::string& text) {
    const std::string path = log_.dir() + "/nccom.toml";
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(text.c_str(), f);
    std::fclose(f);
    env_["NCCOM_CONFIG"] = path;
    config_path_ = path;
  }

  // A selection that must fail before the plugin's init, with NRT_INVALID.
  std::string refused() {
    auto chosen = select_now();
    EXPECT_FALSE(chosen);
    if (chosen) {
      selected_ = std::move(chosen->net);
      return {};
    }
    EXPECT_EQ(chosen.error().status, NRT_INVALID) << chosen.error().message;
    EXPECT_EQ(loopback_->init_calls, 0) << "the plugin's init must not run";
    return chosen.error().message;
  }

  void keep(Selection& chosen) {
    EXPECT_EQ(chosen.net->fini(), ncclSuccess);
    selected_ = std::move(chosen.net);
  }

  std::string config_path_;
  NetConfigStats* stats_ = nullptr;
  lb_stats_t* loopback_ = nullptr;
  std::unique_ptr<Net> selected_;
};

TEST_F(NetHostNetConfig, DefaultsReachThePluginBeforeInit) {
  runtime_offers("nethost-net-config");
  env_["NCCL_SOCKET_IFNAME"] = "lo";
  auto chosen = select_now();
  ASSERT_TRUE(chosen) << chosen.error().message;
  EXPECT_EQ(chosen->net->info().name, "net-config");
  EXPECT_EQ(stats_->configure_calls, 1);
  EXPECT_EQ(stats_->init_calls_at_configure, 0) << "configure must come before init";
  EXPECT_EQ(loopback_->init_calls, 1);
  EXPECT_STREQ(stats_->rails, "1");
  EXPECT_STREQ(stats_->liveness, "true");
  EXPECT_STREQ(stats_->check_ms, "100");
  EXPECT_STREQ(stats_->grace_ms, "500");
  EXPECT_STREQ(stats_->ifname, "lo") << "a dotted key reads the host's setting";
  EXPECT_TRUE(
      logged("configured through nccomNetConfig: plugins.ofi.rails = 1 (from default), "
             "plugins.ofi.liveness = true (from default), plugins.ofi.liveness_check_ms = 100 "
             "(from default), plugins.ofi.liveness_grace_ms = 500 (from default)"))
      << log_text();
  keep(*chosen);
}

TEST_F(NetHostNetConfig, EnvironmentValuesArePassedThrough) {
  env_["NCCOM_OFI_RAILS"] = "4";
  env_["NCCOM_OFI_LIVENESS"] = "0";
  env_["NCCOM_OFI_LIVENESS_CHECK_MS"] = "250";
  env_["NCCOM_OFI_LIVENESS_GRACE_MS"] = "0";
  runtime_offers("nethost-net-config");
  auto chosen = select_now();
  ASSERT_TRUE(chosen) << chosen.error().message;
  EXPECT_STREQ(stats_->rails, "4");
  EXPECT_STREQ(stats_->liveness, "false");
  EXPECT_STREQ(stats_->check_ms, "250");
  EXPECT_STREQ(stats_->grace_ms, "0");
  EXPECT_TRUE(logged("plugins.ofi.rails = 4 (from env NCCOM_OFI_RAILS)")) << log_text();
  EXPECT_TRUE(logged("plugins.ofi.liveness = false (from env NCCOM_OFI_LIVENESS)")) << log_text();
  keep(*chosen);
}

TEST_F(NetHostNetConfig, FileClusterSectionAndEnvironmentAreLayered) {
  config_file(
      "cluster = \"big\"\n"
      "[plugins.ofi]\n"
      "rails = 2\n"
      "liveness_check_ms = 300\n"
      "\n"
      "liveness_grace_ms = 7\n"
      "[clusters.big.plugins.ofi]\n"
      "rails = 3\n"
      "[clusters.small.plugins.ofi]\n"
      "rails = 5\n");
  env_["NCCOM_OFI_LIVENESS_CHECK_MS"] = "400";
  runtime_offers("nethost-net-config");
  auto chosen = select_now();
  ASSERT_TRUE(chosen) << chosen.error().message;
  EXPECT_STREQ(stats_->rails, "3") << "the active cluster's section beats the top level";
  EXPECT_STREQ(stats_->check_ms, "400") << "the environment beats the file";
  EXPECT_STREQ(stats_->grace_ms, "7");
  EXPECT_TRUE(logged("plugins.ofi.rails = 3 (from cluster big " + config_path_ + ":8)"))
      << log_text();
  EXPECT_TRUE(logged("plugins.ofi.liveness_grace_ms = 7 (from " + config_path_ + ":6)"))
      << log_text();
  keep(*chosen);
}

TEST_F(NetHostNetConfig, UnknownKeyInThePluginsSectionNamesThePluginsKnobs) {
  config_file("[clusters.other.plugins.ofi]\nrials = 2\n");
  runtime_offers("nethost-net-config");
  const std::string message = refused();
  EXPECT_NE(message.find(config_path_ + ":2:9: unknown key \"clusters.other.plugins.ofi.rials\""),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("declares: liveness, liveness_check_ms, liveness_grace_ms, rails"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("did you mean \"clusters.other.plugins.ofi.rails\"?"), std::string::npos)
      << message;
}

TEST_F(NetHostNetConfig, OutOfRangeAndMistypedValuesAreRefused) {
  for (const auto& [env, value, expected] :
       {std::tuple{"NCCOM_OFI_RAILS", "65",
                   "NCCOM_OFI_RAILS=\"65\": expected an integer in 1..64 (for plugins.ofi.rails)"},
        std::tuple{"NCCOM_OFI_LIVENESS_CHECK_MS", "0", "(for plugins.ofi.liveness_check_ms)"},
        std::tuple{"NCCOM_OFI_LIVENESS", "maybe", "(for plugins.ofi.liveness)"}}) {
    std::map<std::string, std::string> saved = env_;
    env_[env] = value;
    runtime_offers("nethost-net-config");
    const std::string message = refused();
    EXPECT_NE(message.find(expected), std::string::npos) << message;
    EXPECT_NE(message.find("net-config (Neuron ncclNet_v6)"), std::string::npos) << message;
    EXPECT_EQ(stats_->configure_calls, 0);
    env_ = saved;
    dlclose(g_runtime_handle);
    g_runtime_handle = nullptr;
  }
  config_file("[plugins.ofi]\nrails = \"two\"\n");
  runtime_offers("nethost-net-config");
  const std::string message = refused();
  EXPECT_NE(message.find(config_path_ +
                         ":2:9: plugins.ofi.rails: expected an integer, got string \"two\""),
            std::string::npos)
      << message;
}

TEST_F(NetHostNetConfig, RefusalEndsTheSelectionWithThePluginsReason) {
  runtime_offers("nethost-net-config-refuses");
  const std::string message = refused();
  EXPECT_EQ(stats_->configure_calls, 1);
  EXPECT_NE(message.find("refused its settings in configure (status 3): rails 1: this stand-in "
                         "takes no settings at all; settings: plugins.ofi.rails = 1 (from "
                         "default)"),
            std::string::npos)
      << message;
  EXPECT_FALSE(logged("trying the next candidate")) << log_text();
}

TEST_F(NetHostNetConfig, KnobsWithoutConfigureAreStillChecked) {
  env_["NCCOM_OFI_RAILS"] = "2";
  runtime_offers("nethost-net-config-knobs-only");
  auto chosen = select_now();
  ASSERT_TRUE(chosen) << chosen.error().message;
  EXPECT_EQ(stats_->configure_calls, 0);
  EXPECT_TRUE(logged("plugins.ofi.rails = 2 (from env NCCOM_OFI_RAILS)")) << log_text();
  keep(*chosen);
}

TEST_F(NetHostNetConfig, BrokenDeclarationsAreThePluginsFault) {
  runtime_offers("nethost-net-config-bad-table");
  std::string message = refused();
  EXPECT_NE(message.find("its knob table (nccom_knob_table_t) is invalid; the plugin must be "
                         "fixed:\n  knob \"liveness\": help is missing"),
            std::string::npos)
      << message;
  dlclose(g_runtime_handle);
  g_runtime_handle = nullptr;
  runtime_offers("nethost-net-config-bad-abi");
  message = refused();
  EXPECT_NE(message.find("its nccomNetConfig has abi_version 7, this host supports 1"),
            std::string::npos)
      << message;
}

TEST_F(NetHostNetConfig, PluginWithoutTheExportIsLeftAlone) {
  // The fallback stand-in has no nccomNetConfig: selected, nothing logged.
  auto chosen = select_now();
  ASSERT_TRUE(chosen) << chosen.error().message;
  EXPECT_EQ(chosen->net->info().name, "fake-socket");
  EXPECT_FALSE(logged("nccomNetConfig")) << log_text();
  keep(*chosen);
}

// The shipped nccom.toml states every knob of the two shipped network
// plugins with its default: bound against the file, each value comes from
// the file and equals the plugin's own default.
TEST(NetHostShippedFile, HoldsExactlyTheNetworkPluginsDefaults) {
  const std::string shipped = std::string(NCCOM_SOURCE_DIR) + "/config/nccom.toml";
  for (const std::string& path :
       {std::string(NET_HOST_SOCKET_PLUGIN), std::string(NET_HOST_OFI_PLUGIN)}) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << dlerror();
    auto decl = read_net_config(dlsym(handle, NCCOM_NET_CONFIG_SYMBOL), path);
    ASSERT_TRUE(decl) << decl.error().message;
    config::LoadOptions with_file;
    with_file.tables = {config::host_knobs()};
    with_file.getenv = [&shipped](const char* name) -> const char* {
      return std::string_view(name) == "NCCOM_CONFIG" ? shipped.c_str() : nullptr;
    };
    config::LoadOptions bare = with_file;
    bare.getenv = [](const char*) -> const char* { return nullptr; };
    auto file_config = config::load(with_file);
    auto bare_config = config::load(bare);
    ASSERT_TRUE(file_config && bare_config);
    auto from_file =
        config::PluginSection::bind(*file_config, decl.value()->name, path, decl.value()->knobs);
    auto defaults =
        config::PluginSection::bind(*bare_config, decl.value()->name, path, decl.value()->knobs);
    ASSERT_TRUE(from_file) << from_file.error().message;
    ASSERT_TRUE(defaults) << defaults.error().message;
    ASSERT_FALSE(from_file->entries().empty()) << path;
    for (std::size_t i = 0; i < from_file->entries().size(); ++i) {
      const config::Entry& e = from_file->entries()[i];
      EXPECT_EQ(e.source.kind, config::Source::Kind::File)
          << e.key() << " is missing from " << shipped;
      EXPECT_EQ(e.value, defaults->entries()[i].value) << e.key();
    }
    dlclose(handle);
  }
}

// A declaration the host cannot use is refused before anything of it is
// read beyond its size: too small, or a name no [plugins.<name>] can spell.
TEST(NetHostNetConfigDeclaration, TooSmallOrUnnamedIsRefused) {
  nccom_net_config_t d{};
  d.struct_size = 8;
  d.abi_version = NCCOM_NET_CONFIG_ABI_VERSION;
  auto small = read_net_config(&d, "plugin x");
  ASSERT_FALSE(small);
  EXPECT_NE(small.error().message.find("plugin x: its nccomNetConfig has struct_size 8, smaller "
                                       "than nccom_net_config_t"),
            std::string::npos)
      << small.error().message;
  d.struct_size = sizeof d;
  for (const char* name : {static_cast<const char*>(nullptr), "Has Space", "search_path"}) {
    d.name = name;
    auto bad = read_net_config(&d, "plugin x");
    ASSERT_FALSE(bad) << (name != nullptr ? name : "NULL");
    EXPECT_NE(bad.error().message.find("has no usable name"), std::string::npos)
        << bad.error().message;
  }
  d.name = "good_name";
  EXPECT_TRUE(read_net_config(&d, "plugin x"));
}

}  // namespace
}  // namespace nccom::net::testing
