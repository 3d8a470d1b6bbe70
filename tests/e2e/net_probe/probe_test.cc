// net.probe: a plugin whose discovery calls (init, devices, getProperties)
// crash, exit or hang is found in a probe process, named with the call, and
// skipped; the job goes on with the next candidate. Without the probe the
// same plugin takes every rank down.
#include "net/probe.h"

#include "build_paths.h"
#include "child_process.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>

namespace {

using namespace std::chrono_literals;
using nccom::net::Layout;
using nccom::net::probe_discovery;

std::string careless(const std::string& way) {
  return std::string(CARELESS_PLUGIN_DIR) + "/libcareless-" + way + ".so";
}

std::string probe_error(const std::string& way, std::chrono::milliseconds bound = 60s) {
  const nccom::Status s = probe_discovery(NET_PROBE_PROGRAM, careless(way), Layout::kNeuron, bound);
  return s ? std::string("(the probe found nothing)") : s.error().message;
}

const std::string kWhere = std::string(" in a probe process (") + NET_PROBE_PROGRAM + ")";

TEST(NetProbe, ACrashInDevicesIsNamedWithTheCallAndTheSignal) {
  EXPECT_EQ(probe_error("devices-crash"),
            "its devices() crashed with signal 11 (SIGSEGV)" + kWhere);
}

TEST(NetProbe, ACrashInGetPropertiesNamesTheDevice) {
  EXPECT_EQ(probe_error("props-crash"),
            "its getProperties(0) crashed with signal 11 (SIGSEGV)" + kWhere);
}

TEST(NetProbe, AnInitThatEndsTheProcessIsNamed) {
  EXPECT_EQ(probe_error("init-exit"), "its init() ended the process (exit status 3)" + kWhere);
}

TEST(NetProbe, AnInitThatNeverReturnsEndsAtTheBound) {
  EXPECT_EQ(probe_error("init-hang", 300ms),
            "its init() did not return within 300 ms" + kWhere + " (net.probe_timeout_ms)");
}

TEST(NetProbe, AHealthyPluginPasses) {
  const nccom::Status s =
      probe_discovery(NET_PROBE_PROGRAM, NET_PROBE_SOCKET_PLUGIN, Layout::kNeuron, 60s);
  EXPECT_TRUE(s) << s.error().message;
}

const std::string kTool = std::string(NCCOM_BUILD_DIR) + "/bin/nccom-test";

// nccom-test with the careless plugin as net.plugin, 2 ranks on 2 hosts.
nccom_test::ChildResult run_with(const std::string& way,
                                 std::map<std::string, std::string> extra = {}) {
  std::map<std::string, std::string> env = {{"NCCOM_CONFIG", ""},
                                            {"NCCL_DEBUG", "WARN"},
                                            {"NCCL_NET_PLUGIN", careless(way)},
                                            {"NCCOM_NET_USE_RUNTIME_PLUGIN", "false"}};
  for (auto& [k, v] : extra) env[k] = v;
  return nccom_test::run_child(
      kTool,
      {"-r", "2", "-N", "2", "-b", "8", "-e", "8", "--timeout-ms", "30000", "--check", "allr"},
      env);
}

TEST(NetProbe, EveryRankSkipsAPluginThatCrashesInDevicesAndRunsOnTheFallback) {
  const auto r = run_with("devices-crash");
  const std::string all = r.out + r.err;
  ASSERT_EQ(r.exit_code, 0) << all;
  const std::string warning = "NET/Plugin: cannot use net.plugin \"" + careless("devices-crash") +
                              "\": its devices() crashed with signal 11 (SIGSEGV)" + kWhere +
                              "; trying the next candidate";
  size_t warned = 0;
  for (size_t at = all.find(warning); at != std::string::npos; at = all.find(warning, at + 1))
    ++warned;
  EXPECT_EQ(warned, 2u) << "each rank probes and warns once:\n" << all;
  EXPECT_NE(r.out.find("# net plugin: Socket (Neuron ncclNet_v6) from "), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("# Wrong elements       : 0 OK"), std::string::npos) << r.out;
}

TEST(NetProbe, AHangInInitIsLeftBehindAtTheBound) {
  const auto r = run_with("init-hang", {{"NCCOM_NET_PROBE_TIMEOUT_MS", "1000"}});
  const std::string all = r.out + r.err;
  ASSERT_EQ(r.exit_code, 0) << all;
  EXPECT_NE(all.find("its init() did not return within 1000 ms" + kWhere), std::string::npos)
      << all;
  EXPECT_NE(r.out.find("# Wrong elements       : 0 OK"), std::string::npos) << r.out;
}

// What the probe prevents: the same plugin loaded without it kills the ranks.
TEST(NetProbe, WithoutTheProbeTheCrashTakesTheRanksDown) {
  const auto r = run_with("devices-crash", {{"NCCOM_NET_PROBE", "off"}});
  const std::string all = r.out + r.err;
  EXPECT_NE(r.exit_code, 0) << all;
  EXPECT_NE(all.find("killed by signal 11"), std::string::npos) << all;
}

}  // namespace
