// Shared by the NetHost* suites that build a whole host context: a context
// whose environment is a test's map, the selection it makes, and the log the
// context writes where NCCL_DEBUG_FILE (set by the test) says.
#pragma once

#include "core/context.h"
#include "net/logger.h"
#include "net/selection.h"

#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>

namespace nccom::net::testing {

// `env` is read through for as long as the context lives.
inline Result<std::unique_ptr<core::Context>> context_with_env(
    const std::map<std::string, std::string>* env) {
  config::LoadOptions options;
  options.getenv = [env](const char* name) -> const char* {
    auto it = env->find(name);
    return it == env->end() ? nullptr : it->second.c_str();
  };
  options.tables = {config::host_knobs()};
  return core::Context::create(options);
}

// The context's log file "<dir>/nccom.log" as text ("" when absent).
inline std::string context_log(const std::string& dir) {
  std::ifstream in(dir + "/nccom.log");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace nccom::net::testing
