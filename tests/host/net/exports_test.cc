// The neuronNet* exports, each scenario in a fresh driver process (the net
// plugin is selected once per process): lazy selection, argument adaptation,
// status mapping, NULL checks, neuronGetOFIHandle, fini exactly once.
#include "build_paths.h"
#include "child_process.h"
#include "net_host_util.h"

#include <map>

namespace nccom::net::testing {
namespace {

struct DriverRun {
  std::map<std::string, std::string> values;
  std::string log;
};

// `plugin` is the file the driver reads counters from; it is also what
// NCCL_NET_PLUGIN names unless `configure_plugin` is false.
DriverRun run_driver(const std::string& scenario, const std::string& plugin,
                     const std::string& search_path, bool configure_plugin = true) {
  nccom_test::TempDir dir;
  const std::string log_file = dir.path() + "/nccom.log";
  const std::map<std::string, std::string> env = {
      {"NCCOM_CONFIG", std::string(NCCOM_SOURCE_DIR) + "/config/nccom.toml"},
      {"NCCL_NET_PLUGIN", configure_plugin ? plugin : ""},  // empty counts as unset
      {"NCCOM_PLUGIN_PATH", search_path},
      {"NCCL_SOCKET_IFNAME", "lo"},
      {"NCCL_DEBUG", "INFO"},
      {"NCCL_DEBUG_SUBSYS", "INIT,NET"},
      {"NCCL_DEBUG_FILE", log_file}};
  const auto result = nccom_test::run_child(NET_HOST_EXPORTS_DRIVER, {scenario, plugin}, env);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  std::ifstream in(log_file);
  std::stringstream text;
  text << in.rdbuf();
  return DriverRun{nccom_test::parse_report(result.out), text.str()};
}

const std::string kSuccess = std::to_string(NRT_SUCCESS);
const std::string kInvalid = std::to_string(NRT_INVALID);
const std::string kFailure = std::to_string(NRT_FAILURE);

TEST(NetHostExports, NativeV6PassesThroughAndFinalisesOnce) {
  const std::string plugin = plugin_path("nethost-neuron-v6");
  const DriverRun run = run_driver("exchange", plugin, NET_HOST_FALLBACK_DIR);
  const auto& v = run.values;
  EXPECT_EQ(v.at("lazy_listen"), kSuccess) << "the first export selects the plugin";
  EXPECT_EQ(v.at("connect"), "0");
  EXPECT_EQ(v.at("accept"), "0");
  EXPECT_EQ(v.at("exchange_0"), "0");
  EXPECT_EQ(v.at("exchange_1"), "0");
  EXPECT_EQ(v.at("exchange_4096"), "0");
  EXPECT_EQ(v.at("iflush"), "0");
  EXPECT_EQ(v.at("get_mr_key"), kInvalid) << "ncclInvalidUsage maps to NRT_INVALID";
  EXPECT_EQ(v.at("bad_handle"), kInvalid) << "ncclInvalidArgument maps to NRT_INVALID";
  EXPECT_EQ(v.at("close_send"), kSuccess);
  EXPECT_EQ(v.at("close_recv"), kSuccess);
  EXPECT_EQ(v.at("close_listen"), kSuccess);
  EXPECT_EQ(v.at("init_net"), kSuccess);
  EXPECT_EQ(v.at("init_net_again"), kSuccess);
  EXPECT_EQ(v.at("ofi_handle"), kSuccess);
  EXPECT_EQ(v.at("ofi_handle_is_table"), "1") << "the plugin's own ncclNet_v6 table";
  EXPECT_EQ(v.at("ofi_handle_adapted"), "0");
  EXPECT_EQ(v.at("table_exchange"), "0") << "the runtime can call the plugin's table";
  EXPECT_EQ(v.at("init_calls"), "1") << "selected once, whatever called first";
  EXPECT_EQ(v.at("fini"), kSuccess);
  EXPECT_EQ(v.at("fini_again"), kSuccess);
  EXPECT_EQ(v.at("fini_calls"), "1");
  EXPECT_EQ(v.at("after_fini"), std::to_string(NRT_UNINITIALIZED));
  EXPECT_EQ(v.at("init_after_fini"), std::to_string(NRT_UNINITIALIZED));
  EXPECT_NE(run.log.find("NET/Plugin: using loopback (Neuron ncclNet_v6) from " + plugin +
                         " with 1 device(s) (net.plugin from env NCCL_NET_PLUGIN)"),
            std::string::npos)
      << run.log;
  EXPECT_NE(run.log.find("NET/Plugin: libnccom-net.so load returned"), std::string::npos)
      << "the reference runtime has no plugin loaded: " << run.log;
  EXPECT_NE(run.log.find("neuronNetConnect: loopback (Neuron ncclNet_v6) answered 4 "
                         "(ncclInvalidArgument)"),
            std::string::npos)
      << run.log;
  EXPECT_NE(run.log.find("finalised by neuronFiniPlugin"), std::string::npos) << run.log;
}

TEST(NetHostExports, AdaptedV4ServesTheDataPathAndItsOfiHandleIsLibnccomsV6Adapter) {
  const DriverRun run =
      run_driver("adapted", plugin_path("nethost-neuron-v4"), NET_HOST_FALLBACK_DIR);
  const auto& v = run.values;
  EXPECT_EQ(v.at("connect"), "0");
  EXPECT_EQ(v.at("accept"), "0");
  EXPECT_EQ(v.at("exchange_0"), "0");
  EXPECT_EQ(v.at("exchange_4096"), "0") << "Isend's tag 0 and Irecv's n = 1 suit v4";
  EXPECT_EQ(v.at("iflush"), "0");
  EXPECT_EQ(v.at("get_mr_key"), kInvalid);
  EXPECT_EQ(v.at("ofi_handle"), kSuccess);
  EXPECT_EQ(v.at("ofi_handle_is_table"), "0") << "a v4 plugin has no v6 table of its own";
  EXPECT_EQ(v.at("ofi_handle_adapted"), "1") << "an nccom_adapted_net_t inside libnccom";
  EXPECT_EQ(v.at("ofi_handle_version"), "4");
  EXPECT_EQ(v.at("ofi_handle_layout_neuron"), "1");
  EXPECT_EQ(v.at("ofi_handle_file_is_plugin"), "1");
  EXPECT_EQ(v.at("ofi_handle_init_is_noop"), "1");
  EXPECT_EQ(v.at("table_devices"), "1");
  EXPECT_EQ(v.at("table_exchange"), "0")
      << "the runtime's v6 calls reach the v4 plugin; failed at "
      << (v.count("table_exchange_failed_at") ? v.at("table_exchange_failed_at") : "-") << "\n"
      << run.log;
  EXPECT_EQ(v.at("fini"), kSuccess);
  EXPECT_EQ(v.at("fini_calls"), "0") << "v4 has no fini to call";
}

TEST(NetHostExports, NullArgumentsAreInvalidAndSelectNothing) {
  const std::string plugin = plugin_path("nethost-neuron-v6");
  const DriverRun run = run_driver("nulls", plugin, NET_HOST_FALLBACK_DIR);
  EXPECT_EQ(run.values.at("nulls_invalid"), run.values.at("nulls"));
  EXPECT_EQ(run.values.at("selected"), "0");
}

TEST(NetHostExports, NoUsablePluginFailsInitNetAndEveryCall) {
  const DriverRun run = run_driver("none", plugin_path("nethost-init-fails"), "/nonexistent");
  EXPECT_EQ(run.values.at("init_net"), kFailure);
  EXPECT_EQ(run.values.at("listen"), kFailure) << "the first outcome sticks";
  EXPECT_EQ(run.values.at("fini"), kSuccess) << "nothing to finalise";
  EXPECT_NE(run.log.find("OFI plugin initNet() failed is EFA enabled?"), std::string::npos)
      << run.log;
  EXPECT_NE(run.log.find("cannot use the fallback plugin \"socket\": net plugin \"socket\" not "
                         "found"),
            std::string::npos)
      << run.log;
}

// With no runtime plugin and nothing configured, the exports reach the real
// socket plugin (libnccom-net-socket.so) found in the plugin directories.
TEST(NetHostExports, FallbackReachesTheRealSocketPlugin) {
  const std::string plugin = NET_HOST_SOCKET_PLUGIN;
  const std::string dir = plugin.substr(0, plugin.rfind('/'));
  const DriverRun run = run_driver("exchange", plugin, dir, /*configure_plugin=*/false);
  const auto& v = run.values;
  EXPECT_EQ(v.at("connect"), "0");
  EXPECT_EQ(v.at("accept"), "0");
  EXPECT_EQ(v.at("exchange_0"), "0");
  EXPECT_EQ(v.at("exchange_1"), "0");
  EXPECT_EQ(v.at("exchange_4096"), "0");
  EXPECT_EQ(v.at("init_net"), kSuccess);
  EXPECT_EQ(v.at("ofi_handle"), kSuccess);
  EXPECT_EQ(v.at("ofi_handle_is_table"), "1");
  EXPECT_EQ(v.at("ofi_handle_adapted"), "0");
  EXPECT_EQ(v.at("table_exchange"), "0");
  EXPECT_EQ(v.at("fini"), kSuccess);
  EXPECT_NE(run.log.find("(fallback: the runtime handed over no plugin and none configured)"),
            std::string::npos)
      << run.log;
}

}  // namespace
}  // namespace nccom::net::testing
