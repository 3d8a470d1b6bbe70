// NetConformanceBroken: nccom-plugin-check says clearly what is wrong with a
// plugin that does not conform, with a file that is no plugin, and with a
// plugin that crashes or hangs — never hanging itself.
#include "build_paths.h"
#include "conformance_test.h"

#include <gtest/gtest.h>

#include <csignal>
#include <fstream>

namespace net_conformance {
namespace {

std::string broken(const char* name) {
  return std::string(NET_CONFORMANCE_PLUGIN_DIR) + "/libnetconf-" + name + ".so";
}

bool contains(const nccom_test::ChildResult& r, const std::string& text) {
  return (r.out + r.err).find(text) != std::string::npos;
}

TEST(NetConformanceBroken, TestThatNeverCompletesTimesOut) {
  const auto r = run_check({"--only", "sizes", "--timeout", "2", broken("never-done")});
  EXPECT_EQ(r.exit_code, 1) << output(r);
  const auto rows = failed_rows(r.out);
  ASSERT_EQ(rows.size(), 1u) << output(r);
  EXPECT_EQ(rows[0].rfind("sizes ", 0), 0u) << output(r);
  EXPECT_NE(rows[0].find("timed out waiting for 6 of 6 sends to complete"), std::string::npos)
      << output(r);
  EXPECT_TRUE(contains(r, "the plugin does NOT conform")) << output(r);
}

TEST(NetConformanceBroken, BadPropertiesAreNamed) {
  const auto r = run_check({"--only", "properties", broken("bad-props")});
  EXPECT_EQ(r.exit_code, 1) << output(r);
  EXPECT_TRUE(contains(r, "device 0: ptrSupport 0 lacks NCCL_PTR_HOST")) << output(r);
  EXPECT_TRUE(contains(r, "device 0: speed 0 Mbps is not positive")) << output(r);
  EXPECT_TRUE(contains(r, "device 0: name is not NUL-terminated within 256 bytes")) << output(r);
  EXPECT_TRUE(contains(r, "device 0: maxRecvs 0 is outside 1..128")) << output(r);
}

TEST(NetConformanceBroken, DeviceCountAboveWhatTheHostAcceptsFails) {
  const auto r = run_check({"--only", "devices", broken("huge-devices")});
  EXPECT_EQ(r.exit_code, 1) << output(r);
  EXPECT_TRUE(contains(r,
                       "devices reported 1073741824 devices, more than the 256 nccom accepts; "
                       "libnccom refuses this plugin"))
      << output(r);
}

TEST(NetConformanceBroken, TimeoutOutsideItsRangeIsAUsageError) {
  for (const char* value : {"0", "-1", "86401", "1e300", "inf", "nan", "5s"}) {
    const auto r = run_check({"--timeout", value, broken("never-done")});
    EXPECT_EQ(r.exit_code, 2) << value << ": " << output(r);
    EXPECT_TRUE(contains(r,
                         "--timeout takes a number of seconds greater than 0 and at most 86400 "
                         "(24 hours), got '" +
                             std::string(value) + "'"))
        << output(r);
  }
}

// The crash fails its check only: the row names the signal and the plugin
// call; the tool itself lives on and exits 4.
TEST(NetConformanceBroken, CrashIsReportedWithTheCheck) {
  const auto r = run_check({"--only", "sizes", broken("crash")});
  EXPECT_EQ(r.signal, 0) << output(r);
  EXPECT_EQ(r.exit_code, 4) << output(r);
  const auto rows = failed_rows(r.out);
  ASSERT_EQ(rows.size(), 1u) << output(r);
  EXPECT_EQ(rows[0].rfind("sizes ", 0), 0u) << output(r);
  EXPECT_NE(rows[0].find("crashed: signal SEGV (Segmentation fault) inside the plugin's isend, "
                         "during \"data from this side to the peer\""),
            std::string::npos)
      << output(r);
  EXPECT_TRUE(contains(r, "(1 crashed)")) << output(r);
}

// A plugin call that never returns fails its check once the bound (--timeout
// plus 5 s here) has passed; the check's process is killed, the tool exits 3.
TEST(NetConformanceBroken, HangInAPluginCallFailsItsCheck) {
  const auto r = run_check({"--only", "sizes", "--timeout", "1", broken("hang")});
  EXPECT_EQ(r.exit_code, 3) << output(r);
  const auto rows = failed_rows(r.out);
  ASSERT_EQ(rows.size(), 1u) << output(r);
  EXPECT_EQ(rows[0].rfind("sizes ", 0), 0u) << output(r);
  EXPECT_NE(rows[0].find("hung: the plugin's isend did not return within 6 s"), std::string::npos)
      << output(r);
  EXPECT_NE(rows[0].find("during \"data from this side to the peer\"; its process was killed"),
            std::string::npos)
      << output(r);
}

TEST(NetConformanceBroken, TextFileIsNotAPlugin) {
  nccom_test::TempDir dir;
  const std::string path = dir.path() + "/plugin.so";
  std::ofstream(path) << "not a shared object\n";
  const auto r = run_check({path});
  EXPECT_EQ(r.exit_code, 1) << output(r);
  EXPECT_TRUE(contains(r, "is not an ELF file")) << output(r);
  ASSERT_EQ(failed_rows(r.out).size(), 1u) << output(r);
  EXPECT_NE(failed_rows(r.out)[0].find("InvalidFile"), std::string::npos) << output(r);
  EXPECT_TRUE(contains(r, "needs bind, which failed")) << output(r);
}

TEST(NetConformanceBroken, SharedObjectWithoutTablesIsNotANetPlugin) {
  const auto r = run_check({broken("not-a-net")});
  EXPECT_EQ(r.exit_code, 1) << output(r);
  EXPECT_TRUE(contains(r, "binds:   nothing: the file exports none of")) << output(r);
  EXPECT_TRUE(contains(r, "MissingSymbol")) << output(r);
}

TEST(NetConformanceBroken, MissingFileAndBadUsage) {
  auto r = run_check({"/nonexistent/libnccom-net-x.so"});
  EXPECT_EQ(r.exit_code, 1) << output(r);
  EXPECT_TRUE(contains(r, "NotFound")) << output(r);
  r = run_check({});
  EXPECT_EQ(r.exit_code, 2) << output(r);
  EXPECT_TRUE(contains(r, "usage: nccom-plugin-check")) << output(r);
  r = run_check({"--only", "no-such-check", broken("never-done")});
  EXPECT_EQ(r.exit_code, 2) << output(r);
  EXPECT_TRUE(contains(r, "no check named 'no-such-check'")) << output(r);
}

TEST(NetConformanceBroken, NvidiaLayoutReadOfANeuronTableIsFlagged) {
  const auto r = run_check({"--layout", "nvidia", "--only", "init", broken("never-done")});
  EXPECT_EQ(r.exit_code, 1) << output(r);
  EXPECT_TRUE(contains(r, "are the size of the Neuron table (try --layout neuron)")) << output(r);
  EXPECT_TRUE(contains(r, "AbiMismatch")) << output(r);
}

}  // namespace
}  // namespace net_conformance
