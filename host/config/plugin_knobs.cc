// PluginSection: a plugin's C knob table turned into knobs, and resolved.
#include "config/plugin_knobs.h"

#include "config/registry.h"
#include "config/resolve.h"
#include "config/value.h"

#include <nccom/nrt_abi.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <deque>
#include <limits>

namespace nccom::config {
namespace {

using detail::quote;

constexpr std::string_view kPluginsPrefix = "plugins.";

bool lower_name(std::string_view s) {
  if (s.empty() || s.size() > NCCOM_KNOB_MAX_NAME || s[0] < 'a' || s[0] > 'z') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

bool env_name(std::string_view s) {
  if (s.empty() || s.size() > NCCOM_KNOB_MAX_NAME || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// A string of the plugin's, read at most `limit` + 1 bytes far.
bool bounded(const char* text, std::size_t limit, std::string_view& out) {
  const std::size_t n = strnlen(text, limit + 1);
  if (n > limit) return false;
  out = std::string_view(text, n);
  return true;
}

}  // namespace

bool valid_plugin_section_name(std::string_view name) {
  if (!lower_name(name)) return false;
  for (const Knob& knob : host_knobs()) {
    std::string_view key = knob.key;
    if (key.size() > kPluginsPrefix.size() &&
        key.substr(0, kPluginsPrefix.size()) == kPluginsPrefix &&
        key.substr(kPluginsPrefix.size()) == name)
      return false;
  }
  return true;
}

struct PluginSection::Storage {
  std::deque<std::string> strings;
  std::deque<std::vector<std::string_view>> lists;
  std::vector<Knob> knobs;

  std::string_view keep(std::string text) { return strings.emplace_back(std::move(text)); }
  // The plugin's C table into `knobs`, keys under `prefix`; the problems.
  std::vector<std::string> read(const nccom_knob_table_t& table, const std::string& prefix);
};

namespace {

// Reads one NULL-terminated list (env or allowed) of at most
// NCCOM_KNOB_MAX_LIST names into `out`; returns the problem or "".
std::string read_list(const char* const* list, bool env, std::vector<std::string_view>& out) {
  if (list == nullptr) return {};
  for (std::size_t i = 0;; ++i) {
    if (i > NCCOM_KNOB_MAX_LIST)
      return "more than " + std::to_string(NCCOM_KNOB_MAX_LIST) + " entries, or no NULL at the end";
    const char* item = list[i];
    if (item == nullptr) return {};
    std::string_view text;
    if (!bounded(item, env ? NCCOM_KNOB_MAX_NAME : NCCOM_KNOB_MAX_TEXT, text))
      return "entry " + std::to_string(i) + " is longer than " +
             std::to_string(env ? NCCOM_KNOB_MAX_NAME : NCCOM_KNOB_MAX_TEXT) + " bytes";
    if (env && !env_name(text))
      return "entry " + std::to_string(i) + " " + quote(text) +
             " is not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)";
    out.push_back(text);
  }
}

// One C knob into `knob` (key still short); returns the problems found.
std::vector<std::string> convert(const nccom_knob_t& c, std::size_t index, Knob& knob,
                                 std::vector<std::string_view>& env,
                                 std::vector<std::string_view>& allowed) {
  std::vector<std::string> problems;
  const std::string at = "knob " + std::to_string(index);
  std::string_view key;
  if (c.key == nullptr) {
    problems.push_back(at + " has no key");
    return problems;
  }
  if (!bounded(c.key, NCCOM_KNOB_MAX_NAME, key) || !lower_name(key)) {
    problems.push_back(at + ": key " + (key.empty() ? std::string("(too long)") : quote(key)) +
                       " is not a lower-case name ([a-z][a-z0-9_]*, at most " +
                       std::to_string(NCCOM_KNOB_MAX_NAME) + " bytes, no dots)");
    return problems;
  }
  const std::string named = "knob " + quote(key);
  knob.key = key;
  switch (c.type) {
    case NCCOM_KNOB_BOOL: knob.type = Type::Bool; break;
    case NCCOM_KNOB_INT: knob.type = Type::Int; break;
    case NCCOM_KNOB_STRING: knob.type = Type::String; break;
    case NCCOM_KNOB_ENUM: knob.type = Type::Enum; break;
    default:
      problems.push_back(named + ": type " + std::to_string(c.type) +
                         " is not an nccom_knob_type_t (1 bool, 2 int, 3 string, 4 enum)");
      return problems;
  }
  constexpr unsigned kKnownFlags = NCCOM_KNOB_CASE_INSENSITIVE | NCCOM_KNOB_PRESENCE_MEANS_TRUE;
  if ((c.flags & ~kKnownFlags) != 0)
    problems.push_back(named + ": unknown flag bits " + std::to_string(c.flags & ~kKnownFlags));
  knob.flags = (c.flags & NCCOM_KNOB_CASE_INSENSITIVE ? kCaseInsensitive : 0u) |
               (c.flags & NCCOM_KNOB_PRESENCE_MEANS_TRUE ? kPresenceMeansTrue : 0u);
  if (c.default_text != nullptr && !bounded(c.default_text, NCCOM_KNOB_MAX_TEXT, knob.default_text))
    problems.push_back(named + ": default is longer than " + std::to_string(NCCOM_KNOB_MAX_TEXT) +
                       " bytes");
  if (c.help == nullptr || !bounded(c.help, NCCOM_KNOB_MAX_TEXT, knob.help))
    problems.push_back(named + ": help is missing or longer than " +
                       std::to_string(NCCOM_KNOB_MAX_TEXT) + " bytes");
  if (knob.type == Type::Int) {
    knob.min = c.min;
    knob.max = c.max;
  }
  if (std::string why = read_list(c.env, true, env); !why.empty())
    problems.push_back(named + ": env: " + why);
  if (std::string why = read_list(c.allowed, false, allowed); !why.empty())
    problems.push_back(named + ": allowed: " + why);
  return problems;
}

std::string joined(const std::string& head, const std::vector<std::string>& lines) {
  std::string message = head;
  for (const std::string& line : lines) message += "\n  " + line;
  return message;
}

// The typed value of a file setting if the knob takes that type.
bool same_type(const Knob& knob, const Value& value) {
  switch (knob.type) {
    case Type::Bool: return std::holds_alternative<bool>(value);
    case Type::Int: return std::holds_alternative<std::int64_t>(value);
    case Type::String:
    case Type::Enum: return std::holds_alternative<std::string>(value);
  }
  return false;
}

std::string position(const Source& source) {
  return source.file + ":" + std::to_string(source.line) + ":" + std::to_string(source.column) +
         ": ";
}

}  // namespace

PluginSection::PluginSection() : storage_(std::make_unique<Storage>()) {}
PluginSection::PluginSection(PluginSection&&) noexcept = default;
PluginSection& PluginSection::operator=(PluginSection&&) noexcept = default;
PluginSection::~PluginSection() = default;

const Entry* PluginSection::find(std::string_view key) const {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entries_[it->second];
}

// The table's shape, then every knob, copied: the section may be described
// after the plugin is gone.
std::vector<std::string> PluginSection::Storage::read(const nccom_knob_table_t& table,
                                                      const std::string& prefix) {
  constexpr std::size_t kTableHead = offsetof(nccom_knob_table_t, knobs) + sizeof(void*);
  if (table.struct_size < kTableHead)
    return {"struct_size " + std::to_string(table.struct_size) + " is smaller than a knob table (" +
            std::to_string(kTableHead) + ")"};
  if (table.knob_size < sizeof(nccom_knob_t) || table.knob_size % alignof(nccom_knob_t) != 0)
    return {"knob_size " + std::to_string(table.knob_size) +
            " is not a size of nccom_knob_t (at least " + std::to_string(sizeof(nccom_knob_t)) +
            ", a multiple of " + std::to_string(alignof(nccom_knob_t)) + ")"};
  if (table.count > NCCOM_KNOB_MAX_COUNT)
    return {"count " + std::to_string(table.count) + " is more than " +
            std::to_string(NCCOM_KNOB_MAX_COUNT) + " knobs"};
  if (table.count > 0 && table.knobs == nullptr)
    return {"count is " + std::to_string(table.count) + " but knobs is NULL"};
  std::vector<std::string> problems;
  knobs.resize(table.count);
  const auto* base = reinterpret_cast<const unsigned char*>(table.knobs);
  for (std::uint32_t i = 0; i < table.count; ++i) {
    nccom_knob_t c;
    std::memcpy(&c, base + std::size_t{i} * table.knob_size, sizeof c);
    auto& env = lists.emplace_back();
    auto& allowed = lists.emplace_back();
    std::vector<std::string> found = convert(c, i, knobs[i], env, allowed);
    problems.insert(problems.end(), found.begin(), found.end());
    if (!found.empty()) continue;
    Knob& knob = knobs[i];
    knob.key = keep(prefix + std::string(knob.key));
    knob.default_text = keep(std::string(knob.default_text));
    knob.help = keep(std::string(knob.help));
    for (auto* list : {&env, &allowed})
      for (std::string_view& item : *list) item = keep(std::string(item));
    knob.env = env;
    knob.allowed = allowed;
  }
  return problems;
}

namespace {

// "unknown key" for a setting of `plugin`'s section its table lacks,
// naming what it declares and the closest one.
std::string unknown_setting(const PluginSetting& s, const std::string& who,
                            const std::vector<std::string>& declared) {
  std::string text = position(s.source) + "unknown key " + quote(s.shown) + " (";
  if (declared.empty()) return text + who + " declares no knobs)";
  text += who + " declares:";
  const char* sep = " ";
  for (const std::string& key : declared) text += sep + key, sep = ", ";
  text += ")";
  std::string_view near = detail::closest(s.key, declared);
  if (!near.empty()) {
    std::string suggestion = s.shown.substr(0, s.shown.size() - s.key.size()) + std::string(near);
    text += "; did you mean " + quote(suggestion) + "?";
  }
  return text;
}

// The file's settings of the section as layers: its top level and the
// active cluster's section. Every setting is checked (those of other
// clusters too); the problems are in file order.
struct SettingLayers {
  detail::Layer top, cluster;
  std::vector<std::string> problems;
};

SettingLayers setting_layers(const Config& config, const std::string& plugin,
                             const std::string& who, const detail::Registry& registry,
                             const std::string& prefix) {
  SettingLayers out;
  std::vector<std::string> declared;
  for (const Knob* knob : registry.knobs) declared.emplace_back(knob->key.substr(prefix.size()));
  std::sort(declared.begin(), declared.end());
  for (const PluginSetting& s : config.plugin_settings()) {
    if (s.plugin != plugin) continue;
    const Knob* knob = registry.find(prefix + s.key);
    if (knob == nullptr) {
      out.problems.push_back(unknown_setting(s, who, declared));
      continue;
    }
    if (!s.value || !same_type(*knob, *s.value)) {
      out.problems.push_back(position(s.source) + s.shown + ": expected " +
                             detail::type_noun(*knob) + ", got " + s.described);
      continue;
    }
    detail::Checked checked = detail::check_value(*knob, *s.value);
    if (!checked.value) {
      out.problems.push_back(position(s.source) + s.shown + ": expected " + checked.expected +
                             ", got " + s.described);
      continue;
    }
    detail::Layer* layer = s.source.kind == Source::Kind::File    ? &out.top
                           : s.source.cluster == config.cluster() ? &out.cluster
                                                                  : nullptr;
    if (layer != nullptr) (*layer)[knob] = detail::Assigned{std::move(*checked.value), s.source};
  }
  return out;
}

const char* const kBrokenTable =
    ": its knob table (nccom_knob_table_t) is invalid; the plugin must be fixed:";

}  // namespace

Result<PluginSection> PluginSection::bind(const Config& config, std::string plugin,
                                          const std::string& who, const nccom_knob_table_t* table) {
  const bool declares = table != nullptr && table->struct_size > 0 && table->count > 0;
  if (!valid_plugin_section_name(plugin)) {
    // No [plugins.<name>] section can address it; without knobs nothing is
    // lost, so such a plugin loads as before.
    if (!declares) {
      PluginSection none;
      none.plugin_ = std::move(plugin);
      return none;
    }
    return make_error(NRT_INVALID, who + ": plugin name " + quote(plugin) +
                                       " cannot name a [plugins.<name>] section (lower-case "
                                       "[a-z][a-z0-9_]*, at most " +
                                       std::to_string(NCCOM_KNOB_MAX_NAME) +
                                       " bytes, not a host key of [plugins]); rename the plugin");
  }
  PluginSection section;
  section.plugin_ = plugin;
  Storage& store = *section.storage_;
  const std::string prefix = std::string(kPluginsPrefix) + plugin + ".";
  if (table != nullptr) {
    const std::vector<std::string> problems = store.read(*table, prefix);
    if (!problems.empty()) return make_error(NRT_INVALID, joined(who + kBrokenTable, problems));
  }
  auto built = detail::build_registry({KnobTable(store.knobs)});
  if (!built) return make_error(NRT_INVALID, joined(who + kBrokenTable, built.error()));
  const detail::Registry& registry = built.value();
  // The plugin is known now, with the variables its knobs read, whatever
  // the values turn out to be (environment_notes, environment.h).
  std::vector<std::string> variables;
  for (const Knob* knob : registry.knobs)
    for (std::string_view name : knob->env) variables.emplace_back(name);
  config.claim_plugin(plugin, variables);

  // The values, resolved as the host's are: default < file < active
  // cluster < environment.
  SettingLayers file = setting_layers(config, plugin, who, registry, prefix);
  std::vector<detail::Problem> env_problems;
  std::vector<detail::Ignored> ignored;  // plugin knobs never fall back
  const detail::Layer env = detail::read_env(
      registry, [&config](const char* name) { return config.env(name); }, env_problems, ignored);
  for (detail::Problem& p : env_problems) file.problems.push_back(std::move(p.text));
  if (!file.problems.empty())
    return make_error(NRT_INVALID,
                      joined(who + " is not used: its settings have problems:", file.problems));
  section.entries_ = detail::resolve(registry, {&file.top, &file.cluster, &env});
  for (std::size_t i = 0; i < section.entries_.size(); ++i)
    section.index_.emplace(std::string(section.entries_[i].key().substr(prefix.size())), i);
  return section;
}

std::string PluginSection::describe(const std::string& who) const {
  std::string out = "plugin " + plugin_ + ": " + who + "\n";
  if (entries_.empty()) return out + "  (declares no knobs)\n";
  return out + describe_entries(entries_);
}

}  // namespace nccom::config
