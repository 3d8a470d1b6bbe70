// Helpers for the config tests: a scratch directory, an injected environment.
#pragma once

#include "config/config.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace nccom::config::testing {

// A fresh directory from mkdtemp, removed with its contents at the end.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "nccom-config-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // Writes `text` to <dir>/<name> and returns the full path.
  std::string write(const std::string& name, const std::string& text) const {
    std::string file = path_ + "/" + name;
    std::ofstream(file, std::ios::binary) << text;
    return file;
  }
  std::string path(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// An environment for LoadOptions::getenv; nothing from the real one leaks in.
// A Config keeps its lookup (plugin sections read the environment when their
// plugin loads), so the lookup shares the variables instead of pointing at
// this object: `loaded(FakeEnv())` stays valid after the temporary is gone.
class FakeEnv {
 public:
  FakeEnv& set(const std::string& name, const std::string& value) {
    (*vars_)[name] = value;
    return *this;
  }
  EnvLookup lookup() const {
    return [vars = vars_](const char* name) -> const char* {
      auto it = vars->find(name);
      return it == vars->end() ? nullptr : it->second.c_str();
    };
  }

 private:
  std::shared_ptr<std::map<std::string, std::string>> vars_ =
      std::make_shared<std::map<std::string, std::string>>();
};

// A second component's table, registered next to the host's as any
// component's would be: two integer knobs with ranges and environment names
// and a boolean that the environment turns on by its mere presence, in a
// table of their own ([demo.socket]).
inline constexpr std::string_view kDemoEnvSockets[] = {"NCCL_NSOCKS_PERTHREAD"};
inline constexpr std::string_view kDemoEnvThreads[] = {"NCCL_SOCKET_NTHREADS"};
inline constexpr std::string_view kDemoEnvDebug[] = {"DEMO_DEBUG"};
inline constexpr Knob kDemoKnobs[] = {
    {.key = "demo.socket.nsocks_per_thread",
     .env = kDemoEnvSockets,
     .type = Type::Int,
     .default_text = "1",
     .help = "Sockets per helper thread of the demo component.",
     .min = 1,
     .max = 64},
    {.key = "demo.socket.nthreads",
     .env = kDemoEnvThreads,
     .type = Type::Int,
     .default_text = "1",
     .help = "Helper threads of the demo component.",
     .min = 1,
     .max = 16},
    {.key = "demo.socket.debug",
     .env = kDemoEnvDebug,
     .type = Type::Bool,
     .default_text = "false",
     .help = "Debug mode of the demo component; set in the environment means on.",
     .flags = kPresenceMeansTrue},
};

// The host's table only, as libnccom registers it.
inline LoadOptions host_options(const FakeEnv& env, std::vector<std::string> default_paths = {}) {
  LoadOptions opts;
  opts.getenv = env.lookup();
  opts.default_paths = std::move(default_paths);
  opts.tables = {host_knobs()};
  return opts;
}

// The host's table and the demo component's.
inline LoadOptions options(const FakeEnv& env, std::vector<std::string> default_paths = {}) {
  LoadOptions opts = host_options(env, std::move(default_paths));
  opts.tables.push_back(KnobTable(kDemoKnobs));
  return opts;
}

// The loaded config, failing the test with the error message if loading failed.
inline Config load_ok(const LoadOptions& opts) {
  Result<Config> result = load(opts);
  if (!result.ok()) {
    ADD_FAILURE() << "load failed: " << result.error().message;
    return Config({}, "", "", "");
  }
  return std::move(result).value();
}

// The error message, failing the test if loading succeeded.
inline std::string load_error(const LoadOptions& opts) {
  Result<Config> result = load(opts);
  if (result.ok()) {
    ADD_FAILURE() << "load succeeded but an error was expected";
    return "";
  }
  EXPECT_EQ(result.error().status, NRT_INVALID);
  return result.error().message;
}

}  // namespace nccom::config::testing
