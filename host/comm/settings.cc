#include "comm/settings.h"

#include "core/context.h"
#include "core/runtime.h"
#include "log/log.h"

#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <mutex>

namespace nccom::comm {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// NCCL's "<VARIABLE> set by environment to <value>", naming where the value
// really came from (another variable of the knob, a file line, a cluster
// section). Nothing for an empty value.
void log_set_by(const config::Config& config, const char* key, const char* variable) {
  const config::Entry& entry = config.entry(key);
  const std::string value = entry.text();
  if (value.empty()) return;
  NCCOM_INFO(log::kEnv, "%s set by %s to %s", variable, entry.source.set_by(variable).c_str(),
             value.c_str());
}

Result<BootstrapSettings> resolve(const bootstrap::SocketAddress& root) {
  auto context = core::Context::get();
  if (!context) return context.take_error();
  const config::Config& config = (*context)->config();
  BootstrapSettings s;
  s.socket_timeout = std::chrono::milliseconds(config.get_int("bootstrap.socket_timeout_ms"));
  s.handshake_timeout = std::chrono::milliseconds(config.get_int("bootstrap.handshake_timeout_ms"));
  s.protocol = lower(config.get_string("bootstrap.protocol"));
  s.secret = config.get_string("bootstrap.secret");
  s.host_id = config.get_string("bootstrap.host_id");
  NCCOM_INFO(log::kInit | log::kEnv, "Use socket timeout: %lld",
             static_cast<long long>(s.socket_timeout.count()));

  const std::string ifname = config.get_string("bootstrap.socket_ifname");
  const std::string family_text = config.get_string("bootstrap.socket_family");
  log_set_by(config, "bootstrap.socket_ifname", "NCCL_SOCKET_IFNAME");
  log_set_by(config, "bootstrap.socket_family", "NCCL_SOCKET_FAMILY");
  const config::Entry& configured_root = config.entry("bootstrap.root_comm_id");
  s.configured_root = configured_root.text();
  s.configured_root_set_by = configured_root.source.set_by("");
  const int family = family_text == "AF_INET"    ? AF_INET
                     : family_text == "AF_INET6" ? AF_INET6
                                                 : AF_UNSPEC;
  auto chosen = bootstrap::choose_interface(ifname, family, root);
  if (!chosen) {
    NCCOM_WARN("%s", chosen.error().message.c_str());
    return chosen.take_error();
  }
  s.interface = *chosen;
  NCCOM_INFO(log::kInit | log::kBootstrap, "Bootstrap : Using %s:%s", s.interface.name.c_str(),
             s.interface.address.host_string().c_str());
  return s;
}

}  // namespace

Result<const BootstrapSettings*> bootstrap_settings(const bootstrap::SocketAddress& root) {
  static std::once_flag once;
  static BootstrapSettings settings;
  static Error failure;
  static bool ok = false;
  std::call_once(once, [&root] {
    auto resolved = resolve(root);
    if (resolved) {
      settings = std::move(resolved).value();
      ok = true;
    } else {
      failure = resolved.take_error();
    }
  });
  if (!ok) return failure;
  return &settings;
}

std::string root_comm_id_origin(const BootstrapSettings& settings, const std::string& address) {
  if (!settings.configured_root.empty() && settings.configured_root == address)
    return "set by " + settings.configured_root_set_by;
  return "passed by the runtime";
}

Result<health::ServiceSettings> health_settings() {
  auto context = core::Context::get();
  if (!context) return context.take_error();
  const config::Config& c = (*context)->config();
  health::ServiceSettings s;
  s.enabled = c.get_bool("health.enable");
  s.client_address = c.get_string("health.client_address");
  s.keepalive_ms = static_cast<uint64_t>(c.get_int("health.keepalive_ms"));
  s.timeout_factor = static_cast<int>(c.get_int("health.timeout_factor"));
  s.query_timeout_ms = static_cast<uint64_t>(c.get_int("health.query_timeout_ms"));
  s.stall_warn_ms = static_cast<uint64_t>(c.get_int("health.stall_warn_s")) * 1000;
  s.stall_fail_ms = static_cast<uint64_t>(c.get_int("health.stall_fail_s")) * 1000;
  return s;
}

bootstrap::Protocol choose_protocol(const BootstrapSettings& settings, bool global, int nranks) {
  if (settings.protocol == "flat") return bootstrap::Protocol::kFlat;
  if (settings.protocol == "hierarchical") return bootstrap::Protocol::kHierarchical;
  // auto: the root's predicate of the original's bootstrapCreateRoot. The vNCs
  // of one instance are the devices the runtime reports (one vNC per device in
  // the reference runtime; docs/decisions.md).
  const int devices = runtime::api().nec_get_device_count(nullptr, 0);
  const int vncs_per_instance = devices > 0 ? devices : 1;
  return global && nranks > vncs_per_instance ? bootstrap::Protocol::kHierarchical
                                              : bootstrap::Protocol::kFlat;
}

}  // namespace nccom::comm
