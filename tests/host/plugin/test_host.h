// Shared helpers for the Plugin* suites: a host API that records what the
// plugins asked of it, and the paths of the test plugins.
#pragma once

#include "build_paths.h"
#include "plugins/test_plugin_state.h"

#include <nccom/plugin.h>

#include <dlfcn.h>

#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace nccom::plugin::test {

inline const std::filesystem::path kPluginDir = TEST_PLUGIN_DIR;
inline const std::filesystem::path kAltPluginDir = TEST_PLUGIN_ALT_DIR;

inline std::string plugin_file(const std::string& name) {
  return (kPluginDir / ("libnccom-" + name + ".so")).string();
}

// Whether the dynamic loader currently has `path` mapped. RTLD_NOLOAD never
// loads; when it finds the object it takes a reference, released at once.
inline bool is_mapped(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return false;
  dlclose(handle);
  return true;
}

// The host side a test hands to plugins: config values and a log record.
struct TestHost {
  std::map<std::string, std::string> config{{"greeting", "hello"}};
  int config_calls = 0;
  nccom_host_api_t api{};

  TestHost() {
    api.struct_size = sizeof(api);
    api.abi_version = NCCOM_PLUGIN_ABI_VERSION;
    api.log = &TestHost::log;
    api.config_get = &TestHost::config_get;
    api.host_ctx = this;
  }
  TestHost(const TestHost&) = delete;
  TestHost& operator=(const TestHost&) = delete;

  static void log(nccom_log_level_t, unsigned long, const char*, int, const char* fmt, ...) {
    // The logger has no context argument; tests use one TestHost at a time.
    char line[256];
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(line, sizeof(line), fmt, args);
    va_end(args);
    last_log() = line;
  }
  static std::string& last_log() {
    static std::string line;
    return line;
  }
  static const char* config_get(void* ctx, const char* key) {
    auto* self = static_cast<TestHost*>(ctx);
    ++self->config_calls;
    auto it = self->config.find(key);
    return it == self->config.end() ? nullptr : it->second.c_str();
  }
};

}  // namespace nccom::plugin::test
