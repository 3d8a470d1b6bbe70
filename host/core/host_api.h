// What the host hands an nccom-native plugin at init (nccom_host_api_t): the
// host's logger and a read-only view of the configuration: the plugin's own
// knobs (config::PluginSection) by key, the host's settings by dotted name.
#pragma once

#include "config/config.h"
#include "config/plugin_knobs.h"

#include <nccom/plugin.h>

#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace nccom::core {

class PluginHostApi {
 public:
  // `own` is the plugin's resolved section (its declared knobs).
  explicit PluginHostApi(const config::Config& config,
                         std::optional<config::PluginSection> own = std::nullopt);

  const nccom_host_api_t& api() const { return api_; }
  const config::PluginSection* section() const { return own_ ? &*own_ : nullptr; }

 private:
  // The text config_get answers for `key`, or nullopt (see nccom/plugin.h).
  std::optional<std::string> lookup(const std::string& key) const;

  static const char* config_get(void* host_ctx, const char* key);

  nccom_host_api_t api_{};
  const config::Config config_;  // a copy: a net may outlive the context it came from
  std::optional<config::PluginSection> own_;
  std::mutex mutex_;
  std::map<std::string, std::string> answers_;  // stable storage until fini
};

}  // namespace nccom::core
