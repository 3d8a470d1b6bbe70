#include "core/host_api.h"

#include "log/log.h"

namespace nccom::core {

PluginHostApi::PluginHostApi(const config::Config& config, std::string section)
    : config_(config), section_(std::move(section)) {
  api_.struct_size = sizeof(nccom_host_api_t);
  api_.abi_version = NCCOM_PLUGIN_ABI_VERSION;
  api_.log = &log::sdk_log;
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

}  // namespace nccom::core
