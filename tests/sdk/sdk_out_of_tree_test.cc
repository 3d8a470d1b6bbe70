// The SDK as a third party uses it: install nccom, build the example plugins
// out of tree with find_package(nccom), and use them — the smallest one loaded
// by the host loader, the topology and transport examples by real
// communicators (nccom-test, 4 ranks on 2 emulated hosts, --check) in place of
// the in-tree plugins.
#include "build_paths.h"
#include "child_process.h"
#include "nccom_test_table.h"
#include "plugin/plugin_loader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>

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

void expect_checked(const ChildResult& r) {
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const auto rows = nccom_test::table_rows(r.out);
  ASSERT_EQ(rows.size(), 5u) << r.out;
  for (const auto& row : rows) {
    ASSERT_EQ(row.size(), 13u) << r.out;
    EXPECT_EQ(row[8], "0") << r.out;
    EXPECT_EQ(row[12], "0") << r.out;
  }
  EXPECT_NE(r.out.find("# Wrong elements       : 0 OK"), std::string::npos) << r.out;
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

}  // namespace
