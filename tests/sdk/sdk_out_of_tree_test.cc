// The SDK as a third party uses it: install nccom, build the example plugin
// out of tree with find_package(nccom), load the result with the host loader.
#include "plugin/plugin_loader.h"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace {

int shell(const std::string& command, std::string* output) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) output->append(buf, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void no_log(nccom_log_level_t, unsigned long, const char*, int, const char*, ...) {}

TEST(SdkOutOfTree, InstalledPackageBuildsAPluginTheHostLoads) {
  char pattern[] = "/tmp/nccom-sdk-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::filesystem::path dir = pattern;
  const std::string prefix = (dir / "prefix").string();
  const std::string build = (dir / "build").string();
  std::string out;

  ASSERT_EQ(shell(std::string(CMAKE_COMMAND) + " --install " + NCCOM_BUILD_DIR +
                      " --prefix " + prefix, &out), 0) << out;
  ASSERT_TRUE(std::filesystem::exists(prefix + "/include/nccom/plugin.h"));
  for (const char* file : {"/lib/libnccom.so", "/lib/libnccom.so.2", "/lib/libnccom.so.2.31.24",
                           "/lib/libnrt.so.1", "/share/nccom/nccom.toml", "/bin/nccom-info"}) {
    EXPECT_TRUE(std::filesystem::exists(prefix + file)) << file;
  }
  // The installed runtime finds the installed libnccom next to it ($ORIGIN).
  out.clear();
  EXPECT_EQ(shell(prefix + "/bin/nccom-info", &out), 0) << out;
  EXPECT_NE(out.find(prefix + "/lib/libnccom.so"), std::string::npos) << out;
  ASSERT_EQ(shell(std::string(CMAKE_COMMAND) + " -S " + NCCOM_SOURCE_DIR +
                      "/sdk/examples/hello_plugin -B " + build + " -DCMAKE_PREFIX_PATH=" + prefix,
                  &out), 0) << out;
  ASSERT_EQ(shell(std::string(CMAKE_COMMAND) + " --build " + build, &out), 0) << out;

  nccom_host_api_t host{};
  host.struct_size = sizeof host;
  host.abi_version = NCCOM_PLUGIN_ABI_VERSION;
  host.log = &no_log;
  auto plugin = nccom::plugin::load_plugin("hello", NCCOM_PLUGIN_KIND_TRANSPORT, host, {build});
  ASSERT_TRUE(plugin) << plugin.error().message;
  EXPECT_EQ((*plugin)->name(), "hello");
  EXPECT_EQ((*plugin)->plugin_version(), "1.0.0");

  std::filesystem::remove_all(dir);
}

}  // namespace
