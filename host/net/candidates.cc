// The process's candidate list (selection.h) and the kernel check.
#include "core/context.h"
#include "core/runtime.h"
#include "log/log.h"
#include "net/net_config.h"
#include "net/probe.h"
#include "net/selection.h"

#include <nccom/util/efa.h>

#include <dlfcn.h>
#include <link.h>
#include <strings.h>

#include <chrono>
#include <cstdlib>
#include <system_error>

namespace nccom::net {
namespace {

constexpr const char* kFallbackName = "socket";

// The file behind a dlopen handle, for messages ("" when unknown).
std::string handle_path(void* handle) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_name == nullptr) {
    return {};
  }
  return map->l_name;
}

// The file a name would load, so net.plugin = "socket" (or its path) does
// not put the fallback in the list twice.
std::filesystem::path first_existing(const std::string& name,
                                     const std::vector<std::filesystem::path>& dirs) {
  for (const auto& path : plugin_paths(name, dirs)) {
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) return std::filesystem::weakly_canonical(path, ec);
  }
  return {};
}

// (a): nullptr when the runtime supplies nothing.
void* runtime_handle() {
  int err = 0;
  char message[512] = {};
  void* handle = runtime::api().nrt_get_libnccl_net(&err, message, sizeof message);
  if (handle == nullptr && err != 0) {
    // The usual state on a host without EFA (the runtime found no
    // libnccom-net.so), hence INFO; the chosen fallback is logged as such.
    NCCOM_INFO(log::kNet | log::kInit, "NET/Plugin: libnccom-net.so load returned %d%s%s", err,
               message[0] != '\0' ? ": " : "", message);
  }
  return handle;
}

}  // namespace

namespace {

using Probe = std::function<Status(const Net&)>;
using Prepare = std::function<Status(Net&)>;

// net.probe: the discovery calls of plugins that are not nccom's own run
// first in a child process (probe.h); empty when net.probe is off.
Probe probe_of(const config::Config& config) {
  const std::string probe_mode = config.get_string("net.probe");
  if (strcasecmp(probe_mode.c_str(), "off") == 0) return {};
  const bool all = strcasecmp(probe_mode.c_str(), "all") == 0;
  const std::chrono::milliseconds bound(config.get_int("net.probe_timeout_ms"));
  return [all, bound](const Net& net) -> Status {
    const std::string& file = net.info().file;
    if (file.empty() || (!all && is_own_plugin(file))) return {};
    const std::filesystem::path program = probe_program();
    if (program.empty()) {
      NCCOM_INFO(log::kNet | log::kInit,
                 "NET/Plugin: net.probe of %s not run: no nccom-net-probe in %s/nccom",
                 file.c_str(), core::own_directory().c_str());
      return {};
    }
    return probe_discovery(program, file, net.info().layout, bound);
  };
}

// The runtime's plugin, when the runtime hands one over and it is used.
// Whether the runtime offered one goes to `offered`.
void add_runtime(const config::Config& config, const Probe& probe, const Prepare& prepare,
                 std::vector<Candidate>& candidates, bool& offered) {
  void* handle = runtime_handle();
  if (handle == nullptr) return;
  offered = true;
  const std::string path = handle_path(handle);
  std::string where = "the runtime's libnccom-net.so";
  if (!path.empty()) where += " (" + path + ")";
  // The file is named wherever the plugin is (the runtime's plugin and
  // nccom's own libfabric plugin may report the same table name).
  candidates.push_back(
      {where, "handed over by the runtime (nrt_get_libnccl_net)",
       [handle, where] { return bind_handle(handle, Layout::kNeuron, where, where); }, probe,
       prepare,
       "on machines without EFA, net.use_runtime_plugin = false "
       "(NCCOM_NET_USE_RUNTIME_PLUGIN=0) uses the next plugin without trying this one",
       efa_absence(config.get_string("net.efa"), config.entry("net.efa").source.to_string(),
                   kRdmaClassDir)});
}

// The fallback plugin's reason: why the plugins before it were not used.
std::string fallback_reason(bool use_runtime, bool runtime_offered, bool configured) {
  return std::string("fallback: ") +
         (!use_runtime      ? "the runtime's plugin is not used (net.use_runtime_plugin = false)"
          : runtime_offered ? "the runtime's plugin was unusable"
                            : "the runtime handed over no plugin") +
         (configured ? " and net.plugin was unusable" : " and none configured");
}

}  // namespace

std::vector<Candidate> process_candidates(const config::Config& config,
                                          const std::vector<std::filesystem::path>& plugin_dirs) {
  std::vector<Candidate> candidates;
  // Whichever candidate wins, a plugin exporting nccomNetConfig gets its knobs.
  const Prepare prepare = [config](Net& net) -> Status { return configure_net(net, config); };
  const Probe probe = probe_of(config);
  bool runtime_offered = false;
  const bool use_runtime = config.get_bool("net.use_runtime_plugin");
  if (use_runtime) {
    add_runtime(config, probe, prepare, candidates, runtime_offered);
  } else {
    NCCOM_INFO(log::kNet | log::kInit,
               "NET/Plugin: net.use_runtime_plugin is false; the runtime's plugin is not used");
  }

  const std::string configured = config.get_string("net.plugin");
  const auto configured_file =
      configured.empty() ? std::filesystem::path() : first_existing(configured, plugin_dirs);
  const bool nvidia = strcasecmp(config.get_string("net.plugin_layout").c_str(), "nvidia") == 0;
  if (!configured.empty()) {
    const Layout layout = nvidia ? Layout::kNvidia : Layout::kNeuron;
    std::string reason = "net.plugin from " + config.entry("net.plugin").source.to_string();
    if (nvidia) reason += ", NVIDIA layout";
    const std::string origin = configured_file.empty() ? configured : configured_file.string();
    candidates.push_back({"net.plugin \"" + configured + "\"", reason,
                          [configured, layout, plugin_dirs, origin] {
                            return open_and_bind(configured, layout, plugin_dirs, origin);
                          },
                          probe, prepare, "", ""});
  }

  const auto fallback_file = first_existing(kFallbackName, plugin_dirs);
  const bool same_as_configured =
      !configured.empty() &&
      (configured == kFallbackName || (!fallback_file.empty() && configured_file == fallback_file));
  if (!same_as_configured) {
    const std::string origin =
        fallback_file.empty() ? std::string(kFallbackName) : fallback_file.string();
    candidates.push_back({std::string("the fallback plugin \"") + kFallbackName + "\"",
                          fallback_reason(use_runtime, runtime_offered, !configured.empty()),
                          [plugin_dirs, origin] {
                            return open_and_bind(kFallbackName, Layout::kNeuron, plugin_dirs,
                                                 origin);
                          },
                          probe, prepare, "", ""});
  }
  return candidates;
}

std::string fork_safe_warning(const std::string& release, const std::string& fork_safe) {
  if (!fork_safe.empty()) return {};
  char* end = nullptr;
  const long major = std::strtol(release.c_str(), &end, 10);
  if (end == release.c_str() || *end != '.') return {};
  const char* minor_text = end + 1;
  const long minor = std::strtol(minor_text, &end, 10);
  if (end == minor_text) return {};
  if (major > 5 || (major == 5 && minor >= 14)) return {};
  return "Linux kernel " + std::to_string(major) + "." + std::to_string(minor) +
         " requires setting FI_EFA_FORK_SAFE=1 (before 5.14 the kernel cannot keep memory "
         "registered with EFA safe across fork()). Multi-node support will be disabled.";
}

}  // namespace nccom::net
