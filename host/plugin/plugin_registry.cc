#include "plugin/plugin_registry.h"

namespace nccom::plugin {

PluginRegistry::~PluginRegistry() {
  // Reverse order of acquisition: a later plugin may use an earlier one.
  while (!plugins_.empty()) plugins_.pop_back();
}

size_t PluginRegistry::load_all(const std::vector<std::string>& names_or_paths,
                                nccom_plugin_kind_t kind, const HostApiFor& host_for,
                                const std::vector<std::filesystem::path>& search_dirs,
                                const LoadErrorCallback& on_error) {
  auto report = [&](const LoadError& e) {
    if (on_error) on_error(e);
  };
  size_t loaded = 0;
  for (const auto& entry : names_or_paths) {
    auto plugin = open_plugin(entry, kind, search_dirs);
    if (!plugin) {
      report(plugin.error());
      continue;
    }
    LoadedPlugin& candidate = *plugin.value();
    if (const LoadedPlugin* first = find(kind, candidate.name())) {
      // Refused before init, so the duplicate never ran any code of its own
      // beyond its library constructors.
      report(LoadError{LoadErrorKind::DuplicateName, candidate.path().string(),
                       candidate.path().string() + ": plugin \"" + candidate.name() +
                           "\" is already loaded from " + first->path().string() +
                           "; the first one is used and this one skipped; remove one of them "
                           "from the plugin list"});
      continue;
    }
    auto host = host_for(candidate);
    if (!host) {
      report(host.error());
      continue;
    }
    if (auto started = candidate.init(*host.value()); !started) {
      report(started.error());
      continue;
    }
    plugins_.push_back(std::move(plugin.value()));
    ++loaded;
  }
  return loaded;
}

LoadedPlugin* PluginRegistry::find(nccom_plugin_kind_t kind, const std::string& name) const {
  for (const auto& p : plugins_)
    if (p->kind() == kind && p->name() == name) return p.get();
  return nullptr;
}

std::vector<LoadedPlugin*> PluginRegistry::plugins(nccom_plugin_kind_t kind) const {
  std::vector<LoadedPlugin*> out;
  for (const auto& p : plugins_)
    if (p->kind() == kind) out.push_back(p.get());
  return out;
}

}  // namespace nccom::plugin
