// What the host hands an nccom-native plugin at init (nccom_host_api_t): the
// host's logger and the plugin's own section of the configuration.
#pragma once

#include "config/config.h"

#include <nccom/plugin.h>

#include <map>
#include <mutex>
#include <string>

namespace nccom::core {

class PluginHostApi {
 public:
  // `section` is the configuration prefix of the plugin (e.g. "net.socket");
  // config_get("nthreads") then answers "net.socket.nthreads".
  PluginHostApi(const config::Config& config, std::string section);

  const nccom_host_api_t& api() const { return api_; }

 private:
  static const char* config_get(void* host_ctx, const char* key);

  nccom_host_api_t api_{};
  const config::Config& config_;
  std::string section_;
  std::mutex mutex_;
  std::map<std::string, std::string> answers_;  // stable storage until fini
};

}  // namespace nccom::core
