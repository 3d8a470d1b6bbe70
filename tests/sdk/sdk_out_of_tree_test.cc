// The SDK as a third party uses it: install nccom, build the example plugins
// out of tree with find_package(nccom), and use them — the smallest one loaded
// by the host loader and through the host's context (its knob), the topology
// and transport examples by real communicators (nccom-test, 4 ranks on 2
// emulated hosts, --check) in place of the in-tree plugins, and the TCP net
// example checked by the installed nccom-plugin-check and carrying real
// collectives across emulated hosts.
#include "build_paths.h"
#include "child_process.h"
#include "config/knob.h"
#include "core/context.h"
#include "log/log.h"
#include "nccom_test_table.h"
#include "plugin/plugin_loader.h"

#include <gtest/gtest.h>

#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

using nccom_test::ChildResult;
using nccom_test::run_child;

std::string describe(const ChildResult& r) { return r.out + r.err; }

void no_log(nccom_log_level_t, unsigned long, const char*, int, const char*, ...) {}

const std::string kTool = std::string(NCCOM_BUILD_DIR) + "/bin/nccom-test";

// One installed prefix for the whole suite; each example is built once.
class SdkOutOfTree : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<nccom_test::TempDir>();
    const ChildResult r =
        run_child(CMAKE_COMMAND, {"--install", NCCOM_BUILD_DIR, "--prefix", prefix()}, {});
    install_log_ = describe(r);
    installed_ = r.exit_code == 0;
  }
  static void TearDownTestSuite() { dir_.reset(); }

  static std::string prefix() { return dir_->path() + "/prefix"; }

  // Configures and builds sdk/examples/<name> against the installed prefix;
  // returns its build directory ("" after a failure, reported).
  static std::string build_example(const std::string& name) {
    const std::string build = dir_->path() + "/build-" + name;
    ChildResult r = run_child(CMAKE_COMMAND,
                              {"-S", std::string(NCCOM_SOURCE_DIR) + "/sdk/examples/" + name, "-B",
                               build, "-DCMAKE_PREFIX_PATH=" + prefix()},
                              {});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    if (r.exit_code != 0) return "";
    r = run_child(CMAKE_COMMAND, {"--build", build}, {});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    return r.exit_code == 0 ? build : "";
  }

  void SetUp() override { ASSERT_TRUE(installed_) << install_log_; }

  static std::unique_ptr<nccom_test::TempDir> dir_;
  static bool installed_;
  static std::string install_log_;
};

std::unique_ptr<nccom_test::TempDir> SdkOutOfTree::dir_;
bool SdkOutOfTree::installed_ = false;
std::string SdkOutOfTree::install_log_;

ChildResult run_allreduce(const std::map<std::string, std::string>& env) {
  std::map<std::string, std::string> all = {{"NCCOM_CONFIG", ""}, {"NCCL_DEBUG", "INFO"}};
  for (const auto& [name, value] : env) all.insert_or_assign(name, value);
  return run_child(kTool,
                   {"-r", "4", "-N", "2", "-b", "8", "-e", "64K", "-f", "8", "-n", "2", "-w", "1",
                    "--timeout-ms", "20000", "--check", "allr"},
                   all);
}

// A checked run of `tables` collectives, 5 sizes each: exit 0, no wrong
// element in any row, each table's summary "0 OK".
void expect_checked(const ChildResult& r, std::size_t tables = 1) {
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const auto rows = nccom_test::table_rows(r.out);
  ASSERT_EQ(rows.size(), 5 * tables) << r.out;
  for (const auto& row : rows) {
    ASSERT_EQ(row.size(), 13u) << r.out;
    EXPECT_EQ(row[8], "0") << r.out;
    EXPECT_EQ(row[12], "0") << r.out;
  }
  // One summary per table, each "0 OK".
  const std::string ok = "# Wrong elements       : 0 OK\n";
  std::size_t summaries = 0;
  for (std::size_t at = r.out.find("# Wrong elements"); at != std::string::npos;
       at = r.out.find("# Wrong elements", at + 1)) {
    EXPECT_EQ(r.out.compare(at, ok.size(), ok), 0) << r.out;
    ++summaries;
  }
  EXPECT_EQ(summaries, tables) << r.out;
}

// What a plugin said through record_log (a host API built by the test).
std::string g_plugin_log;
void record_log(nccom_log_level_t, unsigned long, const char*, int, const char* fmt, ...) {
  char line[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(line, sizeof line, fmt, args);
  va_end(args);
  g_plugin_log += std::string(line) + "\n";
}

// Loads `plugin` as a transport plugin through the host's own context, whose
// environment is `env`: its knobs resolved from the configuration, its init
// given the host's API. Answers "" or the error, and the context's log.
std::pair<std::string, std::string> load_through_context(const std::string& plugin,
                                                         std::map<std::string, std::string> env,
                                                         const std::string& log_file) {
  env["NCCL_DEBUG"] = "INFO";
  env["NCCL_DEBUG_SUBSYS"] = "INIT";
  env["NCCL_DEBUG_FILE"] = log_file;
  nccom::config::LoadOptions options;
  options.getenv = [&env](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  options.tables = {nccom::config::host_knobs()};
  std::string error;
  {
    auto context = nccom::core::Context::create(options);
    if (!context) {
      error = "context: " + context.error().message;
    } else {
      const auto loaded = (*context)->load_plugins(NCCOM_PLUGIN_KIND_TRANSPORT, {plugin});
      if (!loaded) {
        error = loaded.error().message;
      } else if (*loaded != 1) {
        error = "not loaded (see the log)";
      }
    }
  }  // the plugin's fini, then the library closes
  nccom::log::reset();
  std::ifstream in(log_file);
  std::stringstream text;
  text << in.rdbuf();
  return {error, text.str()};
}

TEST_F(SdkOutOfTree, InstalledPackageBuildsAPluginTheHostLoads) {
  for (const char* file : {"/include/nccom/plugin.h", "/include/nccom/util/result.h",
                           "/include/nccom/topo/system.h", "/lib/libnccom_sdk_topo.a",
                           "/lib/libnccom.so", "/lib/libnccom.so.2", "/lib/libnccom.so.2.31.24",
                           "/lib/libnrt.so.1", "/share/nccom/nccom.toml", "/bin/nccom-info"}) {
    EXPECT_TRUE(std::filesystem::exists(prefix() + file)) << file;
  }
  // The installed runtime finds the installed libnccom next to it ($ORIGIN).
  const ChildResult r = run_child(prefix() + "/bin/nccom-info", {}, {});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find(prefix() + "/lib/libnccom.so"), std::string::npos) << describe(r);

  const std::string build = build_example("hello_plugin");
  ASSERT_FALSE(build.empty());
  nccom_host_api_t host{};
  host.struct_size = sizeof host;
  host.abi_version = NCCOM_PLUGIN_ABI_VERSION;
  host.log = &no_log;
  auto plugin = nccom::plugin::load_plugin("hello", NCCOM_PLUGIN_KIND_TRANSPORT, host, {build});
  ASSERT_TRUE(plugin) << plugin.error().message;
  EXPECT_EQ((*plugin)->name(), "hello");
  EXPECT_EQ((*plugin)->plugin_version(), "1.0.0");
}

// hello's greeting is a knob it declares: the host's context resolves it from
// [plugins.hello], the environment over the file, and hands it to init by its
// key; a misspelt key is refused naming the file and the right key.
TEST_F(SdkOutOfTree, HelloPluginsGreetingIsAKnobTheConfigurationSets) {
  const std::string build = build_example("hello_plugin");
  ASSERT_FALSE(build.empty());
  const std::string plugin = build + "/libnccom-hello.so";
  const std::string file = dir_->path() + "/hello.toml";
  std::ofstream(file) << "[plugins.hello]\ngreeting = \"good morning from the file\"\n";

  auto [error, log] =
      load_through_context(plugin, {{"NCCOM_CONFIG", file}}, dir_->path() + "/hello-file.log");
  EXPECT_EQ(error, "") << log;
  EXPECT_NE(log.find("hello plugin: good morning from the file\n"), std::string::npos) << log;

  std::tie(error, log) = load_through_context(
      plugin,
      {{"NCCOM_CONFIG", file}, {"NCCOM_HELLO_GREETING", "good evening from the environment"}},
      dir_->path() + "/hello-env.log");
  EXPECT_EQ(error, "") << log;
  EXPECT_NE(log.find("hello plugin: good evening from the environment\n"), std::string::npos)
      << log;

  const std::string bad = dir_->path() + "/hello-bad.toml";
  std::ofstream(bad) << "[plugins.hello]\ngreting = \"typo\"\n";
  std::tie(error, log) =
      load_through_context(plugin, {{"NCCOM_CONFIG", bad}}, dir_->path() + "/hello-bad.log");
  EXPECT_NE(error.find(bad + ":2:"), std::string::npos) << error;
  EXPECT_NE(error.find("did you mean \"plugins.hello.greeting\"?"), std::string::npos) << error;
  EXPECT_EQ(log.find("hello plugin:"), std::string::npos) << "init must not run\n" << log;
}

// A host API is size-first: hello reads config_get only when struct_size
// covers it (an older host's shorter struct: the default greeting), and
// refuses a struct too short to hold the logger.
TEST_F(SdkOutOfTree, HelloPluginReadsOnlyWhatTheHostApiCovers) {
  const std::string build = build_example("hello_plugin");
  ASSERT_FALSE(build.empty());
  static int asked = 0;
  nccom_host_api_t host{};
  host.abi_version = NCCOM_PLUGIN_ABI_VERSION;
  host.log = &record_log;
  host.config_get = [](void*, const char*) -> const char* {
    ++asked;
    return "read past the struct";
  };
  host.struct_size = offsetof(nccom_host_api_t, config_get);  // ends after `log`
  g_plugin_log.clear();
  auto plugin = nccom::plugin::load_plugin("hello", NCCOM_PLUGIN_KIND_TRANSPORT, host, {build});
  ASSERT_TRUE(plugin) << plugin.error().message;
  EXPECT_EQ(asked, 0);
  EXPECT_EQ(g_plugin_log, "hello plugin: hello (the host offers no configuration: the default)\n");

  host.struct_size = sizeof host;
  g_plugin_log.clear();
  plugin = nccom::plugin::load_plugin("hello", NCCOM_PLUGIN_KIND_TRANSPORT, host, {build});
  ASSERT_TRUE(plugin) << plugin.error().message;
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(g_plugin_log, "hello plugin: read past the struct\n");

  host.struct_size = offsetof(nccom_host_api_t, log);  // no logger
  plugin = nccom::plugin::load_plugin("hello", NCCOM_PLUGIN_KIND_TRANSPORT, host, {build});
  ASSERT_FALSE(plugin);
  EXPECT_EQ(plugin.error().kind, nccom::plugin::LoadErrorKind::InitFailed)
      << plugin.error().message;
}

// The flat topology plugin (sdk/examples/topo_plugin, linked with the
// installed nccom::sdk_topo) as the only topology plugin: it describes both
// nodes and searches their rings, and the collectives come out exact.
TEST_F(SdkOutOfTree, TopologyPluginDescribesAndRingsARealCommunicator) {
  const std::string build = build_example("topo_plugin");
  ASSERT_FALSE(build.empty());
  const auto r = run_allreduce({{"NCCOM_TOPOLOGY_PLUGINS", build + "/libnccom-topo-flat.so"},
                                {"NCCL_DEBUG_SUBSYS", "INIT,GRAPH"}});
  expect_checked(r);
  const std::string all = describe(r);
  for (const char* line :
       {"flat topology: node 0 of 2, 2 local ranks", "flat topology: node 1 of 2, 2 local ranks",
        "topology from plugin flat, 2 channel(s) from the search of topology plugin flat"}) {
    EXPECT_NE(all.find(line), std::string::npos) << line << "\n" << all;
  }
  EXPECT_EQ(all.find("topo_neuron"), std::string::npos) << all;
}

// The direct transport (sdk/examples/transport_plugin) ahead of net_neuron:
// it carries every same-host pair, net_neuron the pairs across hosts.
TEST_F(SdkOutOfTree, TransportPluginCarriesARealCommunicatorsSameHostPairs) {
  const std::string build = build_example("transport_plugin");
  ASSERT_FALSE(build.empty());
  const auto r =
      run_allreduce({{"NCCOM_TRANSPORT_PLUGINS", build + "/libnccom-direct.so,net_neuron"},
                     {"NCCL_DEBUG_SUBSYS", "INIT,P2P,NET"}});
  expect_checked(r);
  const std::string all = describe(r);
  EXPECT_NE(all.find("direct transport: ranks of one server, proxy-free"), std::string::npos)
      << all;
  EXPECT_NE(all.find(" via direct (pid "), std::string::npos) << all;
  EXPECT_EQ(all.find(" via P2P"), std::string::npos) << all;
}

// A third party's knobs: the flat plugin declares channels and nic_speed_mbps.
// They come from [plugins.flat], from the active cluster's section over it,
// and from the environment over both; the plugin's init log says what it got.
TEST_F(SdkOutOfTree, TopologyPluginKnobsComeFromFileClusterAndEnvironment) {
  const std::string build = build_example("topo_plugin");
  ASSERT_FALSE(build.empty());
  const std::string file = dir_->path() + "/flat.toml";
  std::ofstream(file) << "cluster = \"lab\"\n"
                         "[plugins.flat]\n"
                         "channels = 1\n"
                         "nic_speed_mbps = 25000\n"
                         "[clusters.lab.plugins.flat]\n"
                         "channels = 3\n";
  const auto r = run_allreduce({{"NCCOM_TOPOLOGY_PLUGINS", build + "/libnccom-topo-flat.so"},
                                {"NCCOM_CONFIG", file},
                                {"FLAT_TOPO_NIC_SPEED_MBPS", "50000"},
                                {"NCCL_DEBUG_SUBSYS", "INIT,GRAPH"}});
  expect_checked(r);
  const std::string all = describe(r);
  EXPECT_NE(all.find("flat topology: every node is one PCIe switch with its cores and one NIC; "
                     "channels 3, NIC 50000 Mbit/s"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("topology from plugin flat, 3 channel(s)"), std::string::npos) << all;
}

// Out of range, from the environment: every rank fails at init with the
// variable, the key and the range, before the plugin runs any code of its own.
TEST_F(SdkOutOfTree, TopologyPluginKnobOutOfRangeFailsTheJobWithTheKey) {
  const std::string build = build_example("topo_plugin");
  ASSERT_FALSE(build.empty());
  const auto r = run_allreduce(
      {{"NCCOM_TOPOLOGY_PLUGINS", build + "/libnccom-topo-flat.so"}, {"FLAT_TOPO_CHANNELS", "99"}});
  EXPECT_NE(r.exit_code, 0) << describe(r);
  const std::string all = describe(r);
  EXPECT_NE(all.find("FLAT_TOPO_CHANNELS=\"99\": expected an integer in 1..32 (for "
                     "plugins.flat.channels)"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("topology plugin \"flat\" (" + build), std::string::npos) << all;
  EXPECT_EQ(all.find("flat topology: every node"), std::string::npos) << "init must not run";
}

// nccom-topo, installed, simulates the flat plugin's own platform: it knows
// no platform of its own, so everything it prints of "flat" came through the
// plugin's list_platforms / describe_node answers; a device count the
// platform lacks is the plugin's error.
TEST_F(SdkOutOfTree, NccomTopoSimulatesAThirdPartyPluginsPlatform) {
  const std::string build = build_example("topo_plugin");
  ASSERT_FALSE(build.empty());
  const std::string tool = prefix() + "/bin/nccom-topo";
  const std::string plugin = build + "/libnccom-topo-flat.so";
  ChildResult r = run_child(tool, {"--plugins", plugin, "--platform", "flat", "--nodes", "2"}, {});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  for (const char* line :
       {"platform flat (FLAT v1): instance family 0, arch flat, pod none of 1 nodes\n",
        "per node: 4 devices, 1 NeuronCores each, LNC=1 -> 1 logical cores per device, 4 per "
        "node, 1 NICs, 0 device links\n",
        "  nic 0: pci switch 0, numa 0, devices 0 1 2 3\n", "2 nodes x 4 ranks = 8 ranks",
        "system: from topology plugin flat"}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  }
  r = run_child(tool, {"--plugins", plugin, "--platform", "flat", "--nodes", "1", "--devices", "3"},
                {});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.err.find("describe_node returned INVALID_ARGUMENT: flat topology: a flat node has "
                       "1, 2, 4 or 8 devices, not 3"),
            std::string::npos)
      << describe(r);
  r = run_child(tool, {"--plugins", plugin, "--platform", "trn2", "--nodes", "1"}, {});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.err.find("unknown platform \"trn2\" (valid: flat)"), std::string::npos)
      << describe(r);
}

// nccom-config, installed, lists the plugin's knobs with their sources, and
// --check refuses a misspelt key under [plugins.flat] with a suggestion.
TEST_F(SdkOutOfTree, NccomConfigListsAndChecksTheTopologyPluginsKnobs) {
  const std::string build = build_example("topo_plugin");
  ASSERT_FALSE(build.empty());
  const std::string tool = prefix() + "/bin/nccom-config";
  const std::string file = dir_->path() + "/flat-list.toml";
  std::ofstream(file) << "[plugins.flat]\nchannels = 4\n";
  const std::map<std::string, std::string> env = {
      {"NCCOM_TOPOLOGY_PLUGINS", build + "/libnccom-topo-flat.so"},
      {"NCCOM_CONFIG", file},
      {"FLAT_TOPO_NIC_SPEED_MBPS", "40000"}};
  ChildResult r = run_child(tool, {}, env);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("plugin flat: topology plugin \"flat\" (" + build), std::string::npos)
      << r.out;
  const auto line_of = [&](const std::string& key) {
    const std::size_t at = r.out.find("\n" + key + " ");
    return at == std::string::npos ? std::string()
                                   : r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
  };
  EXPECT_NE(line_of("plugins.flat.channels").find(file + ":2"), std::string::npos) << r.out;
  EXPECT_NE(line_of("plugins.flat.nic_speed_mbps").find("env FLAT_TOPO_NIC_SPEED_MBPS"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("[an integer in 1..32; env FLAT_TOPO_CHANNELS]"), std::string::npos)
      << r.out;
  // The shipped network plugins are listed too, each with its own knobs.
  EXPECT_NE(r.out.find("\nplugins.socket.nthreads "), std::string::npos) << r.out;

  const std::string bad = dir_->path() + "/flat-bad.toml";
  std::ofstream(bad) << "[plugins.flat]\nchanels = 2\n";
  r = run_child(tool, {"--check", bad}, env);
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(describe(r).find(bad + ":2:11: unknown key \"plugins.flat.chanels\""),
            std::string::npos)
      << describe(r);
  EXPECT_NE(describe(r).find("did you mean \"plugins.flat.channels\"?"), std::string::npos)
      << describe(r);
}

// The TCP net example (sdk/examples/tcp_net_plugin) as its author checks it:
// the installed nccom-plugin-check passes every applicable check with the
// peer as a thread and as a second process (iread is skipped: no RMA).
TEST_F(SdkOutOfTree, TcpNetPluginPassesEveryCheckInOneAndInTwoProcesses) {
  const std::string build = build_example("tcp_net_plugin");
  ASSERT_FALSE(build.empty());
  const std::string plugin = build + "/libnccom-net-tcp-example.so";
  for (const bool two : {false, true}) {
    SCOPED_TRACE(two ? "--two-process" : "in process");
    std::vector<std::string> args = {"--timeout", "60"};
    if (two) args.push_back("--two-process");
    args.push_back(plugin);
    const ChildResult r = run_child(prefix() + "/bin/nccom-plugin-check", args, {});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_NE(r.out.find("binds:   ncclNetPlugin_v6 as a Neuron ncclNet_v6 table"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("TcpExample (Neuron ncclNet_v6); capabilities: fini tags "
                         "non-blocking-connect iflush"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("18 passed, 0 failed, 1 skipped: the plugin conforms"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("\niread                SKIP"), std::string::npos) << r.out;
  }
}

// The TCP net example carries real collectives between two emulated hosts,
// chosen the way an operator chooses a plugin; the log and the table's header
// say it was the one used.
TEST_F(SdkOutOfTree, TcpNetPluginCarriesCollectivesAcrossTwoEmulatedHosts) {
  const std::string build = build_example("tcp_net_plugin");
  ASSERT_FALSE(build.empty());
  const std::string plugin = build + "/libnccom-net-tcp-example.so";
  const std::map<std::string, std::string> env = {{"NCCOM_CONFIG", ""},
                                                  {"NCCL_DEBUG", "INFO"},
                                                  {"NCCL_DEBUG_SUBSYS", "NET"},
                                                  {"NCCL_NET_PLUGIN", plugin},
                                                  {"NCCOM_NET_USE_RUNTIME_PLUGIN", "false"}};
  struct Run {
    const char* ranks;
    const char* second;  // the collective after allr
  };
  for (const Run& run : {Run{"2", "allg"}, Run{"4", "redsct"}}) {
    SCOPED_TRACE(std::string(run.ranks) + " ranks on 2 hosts");
    // 8 B .. 512 KiB by 16: 5 sizes, the largest beyond a socket's buffer.
    const ChildResult r =
        run_child(prefix() + "/bin/nccom-test",
                  {"-r", run.ranks, "-N", "2", "-b", "8", "-e", "512K", "-f", "16", "-n", "2", "-w",
                   "1", "--timeout-ms", "20000", "--check", "allr", run.second},
                  env);
    expect_checked(r, 2);
    const std::string all = describe(r);
    EXPECT_NE(all.find("NET/Plugin: using TcpExample (Neuron ncclNet_v6) from " + plugin),
              std::string::npos)
        << all;
    EXPECT_NE(r.out.find("# net plugin: TcpExample (Neuron ncclNet_v6) from " + plugin + "\n"),
              std::string::npos)
        << r.out;
    EXPECT_NE(all.find("via NET_NEURON/TcpExample/0"), std::string::npos) << all;
  }
}

// The example's knob (plugins.tcp_example.address) is resolved by the host:
// a value its configure refuses fails every rank naming the value, where it
// came from and why.
TEST_F(SdkOutOfTree, TcpNetPluginsAddressKnobIsCheckedByTheHost) {
  const std::string build = build_example("tcp_net_plugin");
  ASSERT_FALSE(build.empty());
  const ChildResult r = run_child(
      prefix() + "/bin/nccom-test",
      {"-r", "2", "-N", "2", "-b", "8", "-e", "8", "--timeout-ms", "20000", "--check", "allr"},
      {{"NCCOM_CONFIG", ""},
       {"NCCL_NET_PLUGIN", build + "/libnccom-net-tcp-example.so"},
       {"NCCOM_NET_USE_RUNTIME_PLUGIN", "false"},
       {"NCCOM_TCP_EXAMPLE_ADDRESS", "10.0.0"}});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(describe(r).find("refused its settings in configure (status 3): address \"10.0.0\" "
                             "is not an IPv4 address in dotted form (a.b.c.d); settings: "
                             "plugins.tcp_example.address = 10.0.0 (from env "
                             "NCCOM_TCP_EXAMPLE_ADDRESS)"),
            std::string::npos)
      << describe(r);
}

}  // namespace
