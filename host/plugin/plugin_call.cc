#include "plugin/plugin_call.h"

#include <cstring>

namespace nccom::plugin {

std::string error_text(const ErrorBuffer& buffer) {
  return std::string(buffer.data(), strnlen(buffer.data(), buffer.size()));
}

const char* status_name(nccom_plugin_status_t status) {
  switch (status) {
    case NCCOM_PLUGIN_OK: return "OK";
    case NCCOM_PLUGIN_ERROR: return "ERROR";
    case NCCOM_PLUGIN_UNSUPPORTED: return "UNSUPPORTED";
    case NCCOM_PLUGIN_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case NCCOM_PLUGIN_SYSTEM_ERROR: return "SYSTEM_ERROR";
  }
  return "an unknown status";
}

Error call_failure(const LoadedPlugin& plugin, const char* kind, const char* call,
                   nccom_plugin_status_t status, const std::string& detail) {
  std::string msg = std::string(kind) + " plugin " + plugin.name() + " (" + plugin.path().string() +
                    "): " + call + " returned " + status_name(status);
  if (!detail.empty()) msg += ": " + detail;
  return make_error(status == NCCOM_PLUGIN_INVALID_ARGUMENT ? NRT_INVALID : NRT_FAILURE,
                    std::move(msg));
}

}  // namespace nccom::plugin
