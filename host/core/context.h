// The process-wide host context: the effective configuration, logging set up
// from it, and the plugin registry. Built lazily by the first entry point that
// needs it — never at load time, never by neuronGetVersionInfo.
#pragma once

#include "config/config.h"
#include "plugin/plugin_registry.h"

#include <nccom/util/result.h>

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace nccom::core {

class PluginHostApi;

// How a context is set up beyond its configuration.
struct CreateOptions {
  // Searched after plugins.search_path for plugins given by bare name.
  // Empty: lib/nccom beside libnccom (own_directory() / "nccom"). A tool
  // in bin/ passes bin/../lib/nccom, the same directory of an installation.
  std::filesystem::path installed_plugins;
  // Configure logging from log.level, log.subsys and log.file (and forward
  // WARN lines to the runtime). false: the caller configures logging.
  bool configure_logging = true;
};

class Context {
 public:
  // The process's context; the first outcome (success or the configuration
  // error) sticks for the life of the process.
  static Result<Context*> get();

  // A context from explicit options (tests, tools). Loads the configuration
  // and, unless `setup` says otherwise, configures logging from it.
  static Result<std::unique_ptr<Context>> create(const config::LoadOptions& options,
                                                 const CreateOptions& setup = {});

  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const config::Config& config() const { return config_; }

  // Where plugins given by bare name are looked for: plugins.search_path,
  // then lib/nccom next to libnccom.
  const std::vector<std::filesystem::path>& plugin_dirs() const { return plugin_dirs_; }

  // Loads nccom-native plugins of one kind. A plugin that fails to load is
  // logged as a WARN (what, which file, what to do) and skipped; the others
  // load. Returns the number loaded by this call — or, when a plugin's knob
  // table or a value set for its knobs is invalid, that error (NRT_INVALID):
  // a setting the operator made is never silently dropped with its plugin.
  // `skipped`, when given, receives each skipped plugin's error too.
  Result<std::size_t> load_plugins(nccom_plugin_kind_t kind, const std::vector<std::string>& names,
                                   std::vector<plugin::LoadError>* skipped = nullptr);
  plugin::LoadedPlugin* find_plugin(nccom_plugin_kind_t kind, const std::string& name) const;
  // Every loaded plugin of `kind`, in load order.
  std::vector<plugin::LoadedPlugin*> plugins(nccom_plugin_kind_t kind) const;

 private:
  Context(config::Config config, const std::filesystem::path& installed_plugins);

  config::Config config_;
  std::vector<std::filesystem::path> plugin_dirs_;
  mutable std::mutex plugins_mutex_;
  std::vector<std::unique_ptr<PluginHostApi>> host_apis_;  // outlive the plugins
  plugin::PluginRegistry plugins_;
};

// A configuration that does not load, as one line, cause first: the first
// of config::load's problems (one a line, the file's first), how many more
// there are and the nccom-config command that lists them all, then what to
// do: "FILE:LINE:COL: unknown key ...; did you mean ...? (and 2 more
// problems: nccom-config --check FILE lists them all; nccom configuration
// is invalid: fix it, or point NCCOM_CONFIG at a good file)".
std::string invalid_configuration(const std::string& problems);

// The directory holding the object this code is linked into (libnccom.so's
// directory when running inside the library).
std::filesystem::path own_directory();

// The load options libnccom uses: the process environment, the system file
// and the installed default next to libnccom (<dir>/../share/nccom/nccom.toml
// of `dir`, libnccom's directory unless a tool of the same installation
// passes its own bin/), the host's knob tables.
config::LoadOptions default_load_options(const std::filesystem::path& dir = own_directory());

}  // namespace nccom::core
