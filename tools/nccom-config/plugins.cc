#include "plugins.h"

#include "config/plugin_knobs.h"
#include "core/context.h"
#include "net/bind.h"
#include "net/net_config.h"
#include "plugin/plugin_loader.h"

#include <nccom/net_config.h>

#include <dlfcn.h>

#include <cstddef>
#include <filesystem>
#include <set>
#include <sstream>
#include <vector>

namespace nccom::tools {
namespace {

std::vector<std::string> split_list_by(const std::string& text, char separator) {
  std::vector<std::string> names;
  std::stringstream list(text);
  for (std::string name; std::getline(list, name, separator);)
    if (!name.empty()) names.push_back(name);
  return names;
}

std::vector<std::string> split_list(const std::string& text) { return split_list_by(text, ','); }

}  // namespace

std::vector<std::filesystem::path> plugin_dirs(const config::Config& config) {
  std::vector<std::filesystem::path> dirs;
  for (const std::string& dir : split_list_by(config.get_string("plugins.search_path"), ':'))
    dirs.emplace_back(dir);
  dirs.push_back((core::own_directory() / ".." / "lib" / "nccom").lexically_normal());
  return dirs;
}

namespace {

struct Listing {
  std::string& out;
  bool ok = true;
  std::set<std::string> claimed;  // plugin section names seen

  void bound(const config::Config& config, const std::string& name, const std::string& who,
             const nccom_knob_table_t* table) {
    if (!claimed.insert(name).second) return;  // one plugin, found twice
    auto section = config::PluginSection::bind(config, name, who, table);
    if (!section) {
      ok = false;
      out += "\n" + section.error().message + "\n";
      return;
    }
    out += "\n" + section->describe(who);
  }
};

void native(const config::Config& config, const std::vector<std::filesystem::path>& dirs,
            nccom_plugin_kind_t kind, const char* noun, const std::string& list, Listing& l) {
  for (const std::string& name : split_list(list)) {
    auto plugin = plugin::open_plugin(name, kind, dirs);
    if (!plugin) {
      l.out += std::string("\n") + noun + " plugin \"" + name +
               "\": not loadable, so its knobs are unknown: " + plugin.error().message + "\n";
      continue;
    }
    const plugin::LoadedPlugin& p = *plugin.value();
    const std::string who =
        std::string(noun) + " plugin \"" + p.name() + "\" (" + p.path().string() + ")";
    l.bound(config, p.name(), who, p.knobs());
    // Never initialised; the library stays loaded until the tool exits, as
    // its strings are no longer referenced (the section holds copies).
  }
}

void net_file(const config::Config& config, const std::filesystem::path& path,
              const std::string& what, Listing& l) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    l.out += "\nnet plugin " + what + " (" + path.string() +
             "): cannot be opened: " + (why != nullptr ? why : "unknown error") + "\n";
    return;
  }
  const std::string who = "net plugin " + what + " (" + path.string() + ")";
  const void* symbol = dlsym(handle, NCCOM_NET_CONFIG_SYMBOL);
  if (symbol == nullptr) {
    l.out += "\n" + who + ": declares no knobs (no " + NCCOM_NET_CONFIG_SYMBOL + ")\n";
    return;
  }
  auto decl = net::read_net_config(symbol, who);
  if (!decl) {
    l.ok = false;
    l.out += "\n" + decl.error().message + "\n";
    return;
  }
  l.bound(config, decl.value()->name, who, decl.value()->knobs);
}

std::filesystem::path first_existing(const std::vector<std::filesystem::path>& paths) {
  for (const auto& p : paths) {
    std::error_code ec;
    if (std::filesystem::exists(p, ec)) return p;
  }
  return {};
}

}  // namespace

PluginListing describe_plugins(const config::Config& config) {
  const auto dirs = plugin_dirs(config);
  PluginListing listing;
  std::string& out = listing.text;
  Listing l{out, true, {}};
  out += "\nplugin knobs ([plugins.<name>]; each plugin opened, not initialised)\n";
  native(config, dirs, NCCOM_PLUGIN_KIND_TOPOLOGY, "topology",
         config.get_string("topology.plugins"), l);
  native(config, dirs, NCCOM_PLUGIN_KIND_TRANSPORT, "transport",
         config.get_string("transport.plugins"), l);
  if (const std::string configured = config.get_string("net.plugin"); !configured.empty()) {
    const auto path = first_existing(net::plugin_paths(configured, dirs));
    if (path.empty())
      out += "\nnet plugin \"" + configured + "\" (net.plugin): not found\n";
    else
      net_file(config, path, "\"" + configured + "\" (net.plugin)", l);
  }
  if (const auto path = first_existing(net::plugin_paths("socket", dirs)); !path.empty())
    net_file(config, path, "\"socket\" (the fallback)", l);
  const auto runtime_net =
      (core::own_directory() / ".." / "lib" / "libnccom-net.so").lexically_normal();
  if (std::error_code ec; std::filesystem::exists(runtime_net, ec))
    net_file(config, runtime_net, "libnccom-net.so (what the runtime loads)", l);

  std::string unclaimed;
  for (const config::PluginSetting& s : config.plugin_settings())
    if (l.claimed.count(s.plugin) == 0)
      unclaimed += "  " + s.shown + " = " + s.described + "  (" + s.source.to_string() + ")\n";
  if (!unclaimed.empty())
    out +=
        "\nset in the file for plugins this configuration does not load (checked only when "
        "such a plugin is loaded):\n" +
        unclaimed;

  std::set<std::string> found = config::plugin_names_in(dirs);
  found.insert(l.claimed.begin(), l.claimed.end());
  listing.unknown_sections = config::plugin_section_notes(config, found);
  if (!listing.unknown_sections.empty()) {
    out += "\nsections of the file that name no plugin nccom can find:\n";
    for (const config::SectionNote& note : listing.unknown_sections)
      out += "  " + config::section_note_text(note) + "\n";
  }
  listing.ok = l.ok;
  return listing;
}

}  // namespace nccom::tools
