// nccom::plugin::PluginRegistry — the nccom-native plugins of one host.
//
// load_all() loads a list of plugins of one kind: each one that fails is
// reported exactly once through the caller's callback (the host logs it as
// WARN) and skipped; the others load. Names are unique per kind: the first
// plugin with a name wins, a later one is reported as DuplicateName before
// its init runs. Plugins are finalised in reverse order of loading.
// Not thread-safe: the host loads plugins once, at init, on one thread.
#pragma once

#include "plugin/plugin_loader.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace nccom::plugin {

using LoadErrorCallback = std::function<void(const LoadError&)>;
// The host API a plugin's init receives, chosen per plugin after it was
// opened and validated (so its knobs can be resolved) and before its init.
// An error (its configuration is invalid, say) skips the plugin like any
// other load error. The API must outlive the plugin.
using HostApiFor =
    std::function<Result<const nccom_host_api_t*, LoadError>(const LoadedPlugin& plugin)>;

class PluginRegistry {
 public:
  PluginRegistry() = default;
  PluginRegistry(const PluginRegistry&) = delete;
  PluginRegistry& operator=(const PluginRegistry&) = delete;
  ~PluginRegistry();

  // Loads each entry of `names_or_paths` (see load_plugin) as a plugin of
  // `kind`, in order. Returns how many were loaded; every other entry was
  // passed to `on_error` once.
  size_t load_all(const std::vector<std::string>& names_or_paths, nccom_plugin_kind_t kind,
                  const HostApiFor& host_for, const std::vector<std::filesystem::path>& search_dirs,
                  const LoadErrorCallback& on_error);

  // The same with one host API for every plugin.
  size_t load_all(const std::vector<std::string>& names_or_paths, nccom_plugin_kind_t kind,
                  const nccom_host_api_t& host,
                  const std::vector<std::filesystem::path>& search_dirs,
                  const LoadErrorCallback& on_error) {
    return load_all(
        names_or_paths, kind,
        [&host](const LoadedPlugin&) -> Result<const nccom_host_api_t*, LoadError> {
          return &host;
        },
        search_dirs, on_error);
  }

  // The loaded plugin of `kind` whose descriptor name is `name`, or nullptr.
  LoadedPlugin* find(nccom_plugin_kind_t kind, const std::string& name) const;

  // All loaded plugins of `kind`, in load order.
  std::vector<LoadedPlugin*> plugins(nccom_plugin_kind_t kind) const;

  size_t size() const { return plugins_.size(); }

 private:
  std::vector<std::unique_ptr<LoadedPlugin>> plugins_;  // in load order
};

}  // namespace nccom::plugin
