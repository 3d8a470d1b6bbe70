#include "core/host_api.h"

#include "log/log.h"

#include <cstdarg>

namespace nccom::core {

PluginHostApi::PluginHostApi(const config::Config& config, std::string section)
    : config_(config), section_(std::move(section)) {
  api_.struct_size = sizeof(nccom_host_api_t);
  api_.abi_version = NCCOM_PLUGIN_ABI_VERSION;
  api_.log = &plugin_log;
  api_.config_get = &PluginHostApi::config_get;
  api_.host_ctx = this;
}

const char* PluginHostApi::config_get(void* host_ctx, const char* key) {
  auto* self = static_cast<PluginHostApi*>(host_ctx);
  if (self == nullptr || key == nullptr) return nullptr;
  const std::string full = self->section_.empty() ? key : self->section_ + "." + key;
  if (!self->config_.has(full)) return nullptr;
  std::lock_guard lock(self->mutex_);
  auto [it, inserted] = self->answers_.try_emplace(full);
  if (inserted) it->second = self->config_.get_text(full);
  return it->second.c_str();
}

void plugin_log(nccom_log_level_t level, unsigned long subsys, const char* file, int line,
                const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  log::vmessage(static_cast<log::Level>(level), subsys, file, line, fmt, args);
  va_end(args);
}

}  // namespace nccom::core
