// NetConformancePlugins: every built net plugin passes nccom-plugin-check,
// with the peer as a thread and as a second process; the libfabric plugin
// once per provider this host has (FI_PROVIDER is passed to the child).
#include "conformance_test.h"

#include "build_paths.h"

#include <gtest/gtest.h>

#include <ostream>

namespace net_conformance {
namespace {

struct PluginRun {
  std::string name;
  std::string path;
  std::map<std::string, std::string> env;
  bool two_process = false;
};

std::vector<PluginRun> plugin_runs() {
  std::vector<PluginRun> plugins;
#ifdef NET_CONFORMANCE_SOCKET
  plugins.push_back({"socket", NET_CONFORMANCE_SOCKET, {}});
#endif
#ifdef NET_CONFORMANCE_NEURON
  plugins.push_back({"neuron_tcp", NET_CONFORMANCE_NEURON, {{"FI_PROVIDER", "tcp;ofi_rxm"}}});
  plugins.push_back({"neuron_shm", NET_CONFORMANCE_NEURON, {{"FI_PROVIDER", "shm"}}});
#endif
  // Each check runs in a process of its own, with its own libfabric setup
  // (about a second per connection here): the default suite runs the
  // libfabric plugin once per provider, tcp with the peer as a process and
  // shm with the peer as a thread; the long suite runs the other two.
#ifdef NET_CONFORMANCE_LONG
  constexpr bool kLong = true;
#else
  constexpr bool kLong = false;
#endif
  std::vector<PluginRun> runs;
  for (const PluginRun& p : plugins) {
    for (bool two : {false, true}) {
      PluginRun run = p;
      run.two_process = two;
      run.name += two ? "_two_processes" : "_threads";
      const bool long_only =
          run.name == "neuron_tcp_threads" || run.name == "neuron_shm_two_processes";
      if (long_only == kLong) runs.push_back(run);
    }
  }
  return runs;
}

void PrintTo(const PluginRun& run, std::ostream* out) { *out << run.name; }

class NetConformancePlugins : public ::testing::TestWithParam<PluginRun> {};

TEST_P(NetConformancePlugins, EveryCheckPasses) {
  const PluginRun& run = GetParam();
  std::vector<std::string> args;
  if (run.two_process) args.push_back("--two-process");
  args.push_back(run.path);
  const nccom_test::ChildResult r = run_check(args, run.env);
  EXPECT_EQ(r.exit_code, 0) << output(r);
  EXPECT_TRUE(failed_rows(r.out).empty()) << output(r);
  // The table has a row per check, and the plugin's tables were found.
  EXPECT_NE(r.out.find("binds:   ncclNetPlugin_v6 as a Neuron ncclNet_v6 table"), std::string::npos)
      << output(r);
  for (const char* check : {"init ", "sizes ", "many-outstanding ", "recv-too-small ", "fini "}) {
    EXPECT_NE(r.out.find(std::string("\n") + check), std::string::npos) << check << output(r);
  }
}

TEST_P(NetConformancePlugins, JsonReportSaysItConforms) {
  const PluginRun& run = GetParam();
  std::vector<std::string> args{"--json", "--only", "tags"};
  if (run.two_process) args.push_back("--two-process");
  args.push_back(run.path);
  const nccom_test::ChildResult r = run_check(args, run.env);
  EXPECT_EQ(r.exit_code, 0) << output(r);
  EXPECT_NE(r.out.find("\"conforms\": true"), std::string::npos) << output(r);
  EXPECT_NE(r.out.find("\"name\": \"tags\", \"result\": \"PASS\""), std::string::npos) << output(r);
  EXPECT_EQ(r.out.find("\"result\": \"FAIL\""), std::string::npos) << output(r);
}

#ifdef NET_CONFORMANCE_SOCKET
// stdout is the JSON report whatever the log settings, even when log lines
// are asked for on stdout.
TEST(NetConformanceJson, ParsesAtEveryLogLevel) {
  for (const char* level : {"VERSION", "WARN", "INFO", "TRACE"}) {
    const nccom_test::ChildResult r = run_check(
        {"--json", "--only", "tags", NET_CONFORMANCE_SOCKET},
        {{"NCCL_DEBUG", level}, {"NCCL_DEBUG_SUBSYS", "ALL"}, {"NCCOM_DEBUG_STREAM", "stdout"}});
    EXPECT_EQ(r.exit_code, 0) << level << ": " << output(r);
    EXPECT_EQ(nccom_test::python_json_error(r.out), "") << level << ": " << output(r);
  }
}
#endif

INSTANTIATE_TEST_SUITE_P(, NetConformancePlugins, ::testing::ValuesIn(plugin_runs()),
                         [](const auto& info) { return info.param.name; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(NetConformancePlugins);

}  // namespace
}  // namespace net_conformance
