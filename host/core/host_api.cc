#include "core/host_api.h"

#include "log/log.h"

#include <cstring>

namespace nccom::core {

PluginHostApi::PluginHostApi(const config::Config& config, std::optional<config::PluginSection> own)
    : config_(config), own_(std::move(own)) {
  api_.struct_size = sizeof(nccom_host_api_t);
  api_.abi_version = NCCOM_PLUGIN_ABI_VERSION;
  api_.log = &log::sdk_log;
  api_.config_get = &PluginHostApi::config_get;
  api_.host_ctx = this;
}

std::optional<std::string> PluginHostApi::lookup(const std::string& key) const {
  if (key.find('.') != std::string::npos) {
    if (config_.has(key)) return config_.get_text(key);
    return std::nullopt;
  }
  // An undotted key is one of the plugin's own declared knobs, or nothing.
  if (own_) {
    if (const config::Entry* entry = own_->find(key)) return entry->text();
  }
  return std::nullopt;
}

const char* PluginHostApi::config_get(void* host_ctx, const char* key) {
  auto* self = static_cast<PluginHostApi*>(host_ctx);
  if (self == nullptr || key == nullptr) return nullptr;
  // Keys are short names; anything longer than any key is not one.
  const std::string name(key, strnlen(key, 256));
  std::optional<std::string> text = self->lookup(name);
  if (!text) return nullptr;
  std::lock_guard lock(self->mutex_);
  auto [it, inserted] = self->answers_.try_emplace(name, std::move(*text));
  return it->second.c_str();
}

}  // namespace nccom::core
