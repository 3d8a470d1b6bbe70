#include "net/bind.h"

#include "net/adapters.h"
#include "net/nvidia_layouts.h"

#include <dlfcn.h>

#include <functional>
#include <span>
#include <system_error>

namespace nccom::net {
namespace {

// One table version of one layout, as the prober sees it.
struct Flavor {
  const char* symbol;
  std::size_t size;          // sizeof the table in this layout
  std::size_t other_layout;  // sizeof the other family's table of the same name
  BindResult (*adapt)(BoundTable);
};

constexpr Flavor kNeuronFlavors[] = {
    {NCCL_NET_PLUGIN_SYMBOL_V6, sizeof(ncclNet_v6_t), sizeof(nvidia::Net_v6), adapt_neuron_v6},
    {NCCL_NET_PLUGIN_SYMBOL_V5, sizeof(ncclNet_v5_t), sizeof(nvidia::Net_v5), adapt_neuron_v5},
    {NCCL_NET_PLUGIN_SYMBOL_V4, sizeof(ncclNet_v4_t), sizeof(nvidia::Net_v4), adapt_neuron_v4},
};
constexpr Flavor kNvidiaFlavors[] = {
    {NCCL_NET_PLUGIN_SYMBOL_V6, sizeof(nvidia::Net_v6), sizeof(ncclNet_v6_t), adapt_nvidia_v6},
    {NCCL_NET_PLUGIN_SYMBOL_V5, sizeof(nvidia::Net_v5), sizeof(ncclNet_v5_t), adapt_nvidia_v5},
    {NCCL_NET_PLUGIN_SYMBOL_V4, sizeof(nvidia::Net_v4), sizeof(ncclNet_v4_t), adapt_nvidia_v4},
};

using Lookup = std::function<void*(const char*)>;

// The file the dynamic loader mapped `address` from ("" when it cannot
// say): the plugin's own file, also for a handle the runtime opened.
std::string file_holding(const void* address) {
  Dl_info info{};
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) return {};
  return info.dli_fname;
}

BindResult bind_with(const Lookup& lookup, Layout layout, std::string where, std::string origin,
                     std::unique_ptr<plugin::SharedLibrary> library) {
  const std::span<const Flavor> flavors = layout == Layout::kNvidia
                                              ? std::span<const Flavor>(kNvidiaFlavors)
                                              : std::span<const Flavor>(kNeuronFlavors);
  for (const Flavor& f : flavors) {
    const void* table = lookup(f.symbol);
    if (table == nullptr) continue;
    BoundTable bound{table, f.symbol, std::move(where), std::move(origin), std::move(library)};
    auto sized = check_symbol_size(bound, layout, f.size, f.other_layout);
    if (!sized) return sized.take_error();
    auto adapted = f.adapt(std::move(bound));
    // The lookup reaches the library the Net owns (or the borrowed handle),
    // so it stays valid for the Net's lifetime.
    if (adapted) {
      (*adapted)->set_symbol_lookup(lookup);
      (*adapted)->set_file(file_holding(table));
    }
    return adapted;
  }
  return plugin::LoadError{
      plugin::LoadErrorKind::MissingSymbol, where,
      "Failed to find ncclNetPlugin_v6 symbol. " + where +
          " exports none of ncclNetPlugin_v6, ncclNetPlugin_v5, ncclNetPlugin_v4; it is not a "
          "net plugin"};
}

}  // namespace

BindResult bind_library(plugin::SharedLibrary library, Layout layout, std::string origin) {
  auto owned = std::make_unique<plugin::SharedLibrary>(std::move(library));
  const plugin::SharedLibrary* lib = owned.get();
  return bind_with([lib](const char* name) -> void* { return lib->symbol(name); }, layout,
                   lib->path().string(), std::move(origin), std::move(owned));
}

BindResult bind_handle(void* dl_handle, Layout layout, std::string where, std::string origin) {
  if (dl_handle == nullptr) {
    return plugin::LoadError{plugin::LoadErrorKind::NotFound, where, where + ": no handle"};
  }
  return bind_with(
      [dl_handle](const char* name) -> void* {
        (void)dlerror();
        return dlsym(dl_handle, name);
      },
      layout, std::move(where), std::move(origin), nullptr);
}

std::vector<std::filesystem::path> plugin_paths(const std::string& name_or_path,
                                                const std::vector<std::filesystem::path>& dirs) {
  if (name_or_path.find('/') != std::string::npos) return {name_or_path};
  std::vector<std::filesystem::path> paths;
  for (const auto& dir : dirs) {
    paths.push_back(dir / ("libnccom-net-" + name_or_path + ".so"));
    paths.push_back(dir / ("libnccom-" + name_or_path + ".so"));
  }
  return paths;
}

BindResult open_and_bind(const std::string& name_or_path, Layout layout,
                         const std::vector<std::filesystem::path>& dirs, std::string origin) {
  const auto paths = plugin_paths(name_or_path, dirs);
  for (const auto& path : paths) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec) && paths.size() > 1) continue;
    auto opened = plugin::SharedLibrary::open(path);
    if (!opened) return opened.take_error();
    return bind_library(std::move(opened).value(), layout, std::move(origin));
  }
  std::string looked;
  for (const auto& path : paths) looked += (looked.empty() ? "" : ", ") + path.string();
  return plugin::LoadError{plugin::LoadErrorKind::NotFound, name_or_path,
                           "net plugin \"" + name_or_path + "\" not found; looked for " +
                               (looked.empty() ? std::string("it in no directory") : looked) +
                               " (set plugins.search_path / NCCOM_PLUGIN_PATH, or give a path)"};
}

}  // namespace nccom::net
