#include "net/plugin_answers.h"

#include "log/log.h"
#include "net/nccl_result.h"

#include <cstring>

namespace nccom::net {
namespace {

std::string who(const Net& net) { return describe(net.info()) + " from " + net.info().origin; }

// One WARN when `text` is not terminated within `max_bytes`.
void warn_unterminated(const Net& net, int dev, const char* field, const char* text,
                       std::size_t max_bytes) {
  if (text == nullptr || strnlen(text, max_bytes + 1) <= max_bytes) return;
  NCCOM_WARN(
      "NET/Plugin: %s: getProperties(%d) returned a %s that is not NUL-terminated within "
      "%zu bytes; nccom uses its first %zu bytes (the plugin should fix the string)",
      who(net).c_str(), dev, field, max_bytes, max_bytes);
}

}  // namespace

std::string bounded_text(const char* text, std::size_t max_bytes) {
  if (text == nullptr) return {};
  return std::string(text, strnlen(text, max_bytes));
}

Result<int> device_count(Net& net) {
  int ndev = 0;
  const ncclResult_t r = net.devices(&ndev);
  if (r != ncclSuccess) {
    return make_error(NRT_FAILURE, who(net) + ": devices() returned " + result_text(r));
  }
  if (ndev < 1) {
    return make_error(NRT_FAILURE, who(net) + ": devices() reported " + std::to_string(ndev) +
                                       " devices; a usable net plugin has at least 1");
  }
  if (ndev > kMaxNetDevices) {
    return make_error(NRT_FAILURE, who(net) + ": devices() reported " + std::to_string(ndev) +
                                       " devices, more than the " + std::to_string(kMaxNetDevices) +
                                       " nccom accepts (kMaxNetDevices); the plugin is broken: "
                                       "fix it or choose another with net.plugin");
  }
  return ndev;
}

std::string clamp_properties(ncclNetProperties_v6_t& props) {
  const int given = props.maxRecvs;
  if (given >= 1 && given <= kMaxNetRecvs) return {};
  props.maxRecvs = given < 1 ? 1 : kMaxNetRecvs;
  return "maxRecvs " + std::to_string(given) + " is outside 1.." + std::to_string(kMaxNetRecvs) +
         "; " + std::to_string(props.maxRecvs) + " is used";
}

void warn_about_properties(Net& net, int devices) {
  for (int dev = 0; dev < devices; ++dev) {
    ncclNetProperties_v6_t props{};
    if (net.get_properties(dev, &props) != ncclSuccess) continue;
    warn_unterminated(net, dev, "name", props.name, kMaxNetNameBytes);
    warn_unterminated(net, dev, "pciPath", props.pciPath, kMaxNetPathBytes);
    const std::string clamped = clamp_properties(props);
    if (!clamped.empty()) {
      NCCOM_WARN(
          "NET/Plugin: %s: getProperties(%d): %s (nccom posts one receive per irecv; "
          "transports are handed the clamped value)",
          who(net).c_str(), dev, clamped.c_str());
    }
  }
}

}  // namespace nccom::net
