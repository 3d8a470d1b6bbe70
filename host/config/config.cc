// Config: typed access to the effective values.
#include "config/config.h"

#include "config/value.h"

#include <mutex>
#include <stdexcept>

namespace nccom::config {
namespace {

const char* type_with_article(Type type) {
  switch (type) {
    case Type::Bool: return "a bool";
    case Type::Int: return "an int";
    case Type::String: return "a string";
    case Type::Enum: return "an enum";
  }
  return "?";
}

[[noreturn]] void wrong_type(const Entry& entry, const char* asked) {
  throw std::logic_error("nccom config: " + std::string(entry.key()) + " is " +
                         type_with_article(entry.knob->type) + " knob, read with " + asked);
}

}  // namespace

std::string Source::to_string() const {
  switch (kind) {
    case Kind::Default: return "default";
    case Kind::File: return file + ":" + std::to_string(line);
    case Kind::Cluster: return "cluster " + cluster + " " + file + ":" + std::to_string(line);
    case Kind::Env: return "env " + env_var;
  }
  return "?";
}

std::string Source::set_by(std::string_view variable) const {
  switch (kind) {
    case Kind::Default: return "default";
    case Kind::File: return file + ":" + std::to_string(line);
    case Kind::Cluster: return file + ":" + std::to_string(line) + " (cluster " + cluster + ")";
    case Kind::Env: return env_var == variable ? "environment" : "environment " + env_var;
  }
  return "?";
}

const char* Config::env(const char* name) const { return getenv_(name); }

std::string Entry::text() const { return detail::value_text(value); }

struct Config::Claims {
  std::mutex mutex;
  PluginClaims claims;
};

Config::Config(std::vector<Entry> entries, std::string file, std::string cluster,
               std::string cluster_origin, std::vector<PluginSetting> plugin_settings,
               EnvLookup getenv, std::vector<EnvFallback> env_fallbacks)
    : entries_(std::move(entries)),
      file_(std::move(file)),
      cluster_(std::move(cluster)),
      cluster_origin_(std::move(cluster_origin)),
      plugin_settings_(std::move(plugin_settings)),
      getenv_(std::move(getenv)),
      env_fallbacks_(std::move(env_fallbacks)),
      claims_(std::make_shared<Claims>()) {
  if (!getenv_) getenv_ = [](const char* name) -> const char* { return std::getenv(name); };
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (!index_.emplace(entries_[i].key(), i).second)
      throw std::logic_error("nccom config: knob " + std::string(entries_[i].key()) +
                             " appears twice");
  }
}

PluginClaims Config::plugin_claims() const {
  std::lock_guard lock(claims_->mutex);
  return claims_->claims;
}

void Config::claim_plugin(std::string_view section,
                          const std::vector<std::string>& variables) const {
  std::lock_guard lock(claims_->mutex);
  claims_->claims.sections.emplace(section);
  claims_->claims.variables.insert(variables.begin(), variables.end());
}

const Entry& Config::entry(std::string_view key) const {
  auto it = index_.find(key);
  if (it == index_.end())
    throw std::logic_error("nccom config: no knob named " + std::string(key) + " is registered");
  return entries_[it->second];
}

bool Config::get_bool(std::string_view key) const {
  const Entry& e = entry(key);
  if (e.knob->type != Type::Bool) wrong_type(e, "get_bool");
  return std::get<bool>(e.value);
}

std::int64_t Config::get_int(std::string_view key) const {
  const Entry& e = entry(key);
  if (e.knob->type != Type::Int) wrong_type(e, "get_int");
  return std::get<std::int64_t>(e.value);
}

const std::string& Config::get_string(std::string_view key) const {
  const Entry& e = entry(key);
  if (e.knob->type != Type::String && e.knob->type != Type::Enum) wrong_type(e, "get_string");
  return std::get<std::string>(e.value);
}

std::string Config::get_text(std::string_view key) const { return entry(key).text(); }

std::vector<Entry> Config::section(std::string_view prefix) const {
  std::vector<Entry> out;
  for (const Entry& e : entries_) {
    std::string_view key = e.key();
    if (key == prefix || (key.size() > prefix.size() && key.substr(0, prefix.size()) == prefix &&
                          key[prefix.size()] == '.'))
      out.push_back(e);
  }
  return out;
}

}  // namespace nccom::config
