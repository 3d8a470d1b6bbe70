// The SDK as a third party uses it: install nccom, build the example plugin
// out of tree with find_package(nccom), load the result with the host loader.
#include "child_process.h"
#include "plugin/plugin_loader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace {

using nccom_test::ChildResult;
using nccom_test::run_child;

std::string describe(const ChildResult& r) { return r.out + r.err; }

void no_log(nccom_log_level_t, unsigned long, const char*, int, const char*, ...) {}

TEST(SdkOutOfTree, InstalledPackageBuildsAPluginTheHostLoads) {
  nccom_test::TempDir dir;
  const std::string prefix = dir.path() + "/prefix";
  const std::string build = dir.path() + "/build";

  ChildResult r = run_child(CMAKE_COMMAND, {"--install", NCCOM_BUILD_DIR, "--prefix", prefix}, {});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  ASSERT_TRUE(std::filesystem::exists(prefix + "/include/nccom/plugin.h"));
  for (const char* file : {"/lib/libnccom.so", "/lib/libnccom.so.2", "/lib/libnccom.so.2.31.24",
                           "/lib/libnrt.so.1", "/share/nccom/nccom.toml", "/bin/nccom-info"}) {
    EXPECT_TRUE(std::filesystem::exists(prefix + file)) << file;
  }
  // The installed runtime finds the installed libnccom next to it ($ORIGIN).
  r = run_child(prefix + "/bin/nccom-info", {}, {});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find(prefix + "/lib/libnccom.so"), std::string::npos) << describe(r);

  r = run_child(CMAKE_COMMAND,
                {"-S", std::string(NCCOM_SOURCE_DIR) + "/sdk/examples/hello_plugin", "-B", build,
                 "-DCMAKE_PREFIX_PATH=" + prefix},
                {});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  r = run_child(CMAKE_COMMAND, {"--build", build}, {});
  ASSERT_EQ(r.exit_code, 0) << describe(r);

  nccom_host_api_t host{};
  host.struct_size = sizeof host;
  host.abi_version = NCCOM_PLUGIN_ABI_VERSION;
  host.log = &no_log;
  auto plugin = nccom::plugin::load_plugin("hello", NCCOM_PLUGIN_KIND_TRANSPORT, host, {build});
  ASSERT_TRUE(plugin) << plugin.error().message;
  EXPECT_EQ((*plugin)->name(), "hello");
  EXPECT_EQ((*plugin)->plugin_version(), "1.0.0");
}

}  // namespace
