#include "net/socket_settings.h"

#include "log/log.h"
#include "net/nccl_result.h"

#include <climits>

namespace nccom::net {
namespace {

using ConfigureFn = ncclResult_t (*)(int, int, const char*);

// The socket plugin's own rule (plugins/socket/socket_config.h), repeated in
// the message: before init the plugin has no logger, so its own warning is
// dropped and the host's message must carry the whole story.
constexpr const char* kRule =
    "each count must be at least 1 and nsocks_per_thread x nthreads at most 64 data sockets "
    "per connection (the socket plugin's limits: nsocks_per_thread <= 64, nthreads <= 16)";

std::string knob_text(const char* key, std::int64_t value, const std::string& source) {
  return std::string(key) + " = " + std::to_string(value) + " (from " + source + ")";
}

}  // namespace

SocketSettings socket_settings(const config::Config& config) {
  SocketSettings s;
  s.nsocks_per_thread = config.get_int("net.socket.nsocks_per_thread");
  s.nsocks_source = config.entry("net.socket.nsocks_per_thread").source.to_string();
  s.nthreads = config.get_int("net.socket.nthreads");
  s.nthreads_source = config.entry("net.socket.nthreads").source.to_string();
  s.ifnames = config.get_string("bootstrap.socket_ifname");
  s.ifnames_source = config.entry("bootstrap.socket_ifname").source.to_string();
  return s;
}

Status configure_socket(Net& net, const SocketSettings& settings) {
  auto configure = reinterpret_cast<ConfigureFn>(net.symbol(kSocketConfigureSymbol));
  if (configure == nullptr) return {};
  const std::string plugin = describe(net.info()) + " from " + net.info().origin;
  const std::string values =
      knob_text("net.socket.nsocks_per_thread", settings.nsocks_per_thread,
                settings.nsocks_source) +
      ", " + knob_text("net.socket.nthreads", settings.nthreads, settings.nthreads_source);
  // The knob table bounds each value far below INT_MAX; a value outside int
  // cannot be passed faithfully, so it is refused here rather than truncated.
  const bool fits = settings.nsocks_per_thread >= 1 && settings.nsocks_per_thread <= INT_MAX &&
                    settings.nthreads >= 1 && settings.nthreads <= INT_MAX;
  const ncclResult_t r =
      fits ? configure(static_cast<int>(settings.nsocks_per_thread),
                       static_cast<int>(settings.nthreads),
                       settings.ifnames.empty() ? nullptr : settings.ifnames.c_str())
           : ncclInvalidArgument;
  if (r != ncclSuccess) {
    return make_error(NRT_INVALID, "NET/Plugin: " + plugin + " refused " + values + " in " +
                                       kSocketConfigureSymbol + ": " + result_text(r) + "; " +
                                       kRule);
  }
  const std::string filter =
      settings.ifnames.empty() ? "<plugin default>" : "\"" + settings.ifnames + "\"";
  NCCOM_INFO(log::kNet | log::kInit, "NET/Plugin: %s configured by %s: %s, interfaces %s (from %s)",
             plugin.c_str(), kSocketConfigureSymbol, values.c_str(), filter.c_str(),
             settings.ifnames_source.c_str());
  return {};
}

}  // namespace nccom::net
