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
  if (!ifname.empty())
    NCCOM_INFO(log::kEnv, "NCCL_SOCKET_IFNAME set by environment to %s", ifname.c_str());
  if (!family_text.empty()) {
    NCCOM_INFO(log::kEnv, "NCCL_SOCKET_FAMILY set by environment to %s", family_text.c_str());
  }
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
