// NetConformanceSdk: the SDK as a third-party net plugin author uses it —
// install nccom, build sdk/examples/net_plugin out of tree with
// find_package(nccom), and check the result with the installed
// nccom-plugin-check (in process: a loopback does not cross processes).
#include "build_paths.h"
#include "conformance_test.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace net_conformance {
namespace {

TEST(NetConformanceSdk, ExampleNetPluginBuiltOutOfTreeConforms) {
  nccom_test::TempDir dir;
  const std::string prefix = dir.path() + "/prefix";
  const std::string build = dir.path() + "/build";

  auto r =
      nccom_test::run_child(CMAKE_COMMAND, {"--install", NCCOM_BUILD_DIR, "--prefix", prefix}, {});
  ASSERT_EQ(r.exit_code, 0) << output(r);
  const std::string tool = prefix + "/bin/nccom-plugin-check";
  ASSERT_TRUE(std::filesystem::exists(tool));
  ASSERT_TRUE(std::filesystem::exists(prefix + "/include/nccom/net_v6.h"));

  r = nccom_test::run_child(CMAKE_COMMAND,
                            {"-S", std::string(NCCOM_SOURCE_DIR) + "/sdk/examples/net_plugin", "-B",
                             build, "-DCMAKE_PREFIX_PATH=" + prefix},
                            {});
  ASSERT_EQ(r.exit_code, 0) << output(r);
  r = nccom_test::run_child(CMAKE_COMMAND, {"--build", build}, {});
  ASSERT_EQ(r.exit_code, 0) << output(r);
  const std::string plugin = build + "/libnccom-net-loopback.so";
  ASSERT_TRUE(std::filesystem::exists(plugin));

  r = run_check({plugin}, {}, tool);
  EXPECT_EQ(r.exit_code, 0) << output(r);
  EXPECT_TRUE(failed_rows(r.out).empty()) << output(r);
  EXPECT_NE(r.out.find("ncclNetPlugin_v6    176 bytes"), std::string::npos) << output(r);
  EXPECT_NE(r.out.find("Loopback (Neuron ncclNet_v6)"), std::string::npos) << output(r);
}

}  // namespace
}  // namespace net_conformance
