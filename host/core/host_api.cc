#include "core/host_api.h"

#include "log/log.h"

#include <cstring>

namespace nccom::core {

PluginHostApi::PluginHostApi(const config::Config& config, std::string kind_section,
                             std::optional<config::PluginSection> own)
    : config_(config), kind_section_(std::move(kind_section)), own_(std::move(own)) {
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
  const bool declares = own_ && !own_->entries().empty();
  if (declares) {
    if (const config::Entry* entry = own_->find(key)) return entry->text();
    return std::nullopt;
  }
  if (kind_section_.empty()) return std::nullopt;
  const std::string full = kind_section_ + "." + key;
  if (config_.has(full)) return config_.get_text(full);
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
