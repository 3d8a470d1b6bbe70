#include "config/file_layers.h"

#include "config/value.h"

#include <nccom/nrt_abi.h>

#include <toml++/toml.h>

#include <algorithm>
#include <charconv>
#include <optional>

namespace nccom::config::detail {
namespace {

// What a TOML node holds, for "got ..." in messages.
std::string describe_node(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string: return "string " + quote(node.as_string()->get());
    case toml::node_type::integer: return "integer " + std::to_string(node.as_integer()->get());
    case toml::node_type::floating_point: {
      char buf[64];
      auto [end, ec] = std::to_chars(buf, buf + sizeof buf, node.as_floating_point()->get());
      return "float " + (ec == std::errc() ? std::string(buf, end) : std::string("?"));
    }
    case toml::node_type::boolean:
      return std::string("boolean ") + (node.as_boolean()->get() ? "true" : "false");
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    case toml::node_type::none: break;
  }
  return "nothing";
}

// The node's value if it has the TOML type the knob needs.
std::optional<Value> typed_value(const Knob& knob, const toml::node& node) {
  switch (knob.type) {
    case Type::Bool:
      if (const auto* b = node.as_boolean()) return Value{b->get()};
      break;
    case Type::Int:
      if (const auto* i = node.as_integer()) return Value{i->get()};
      break;
    case Type::String:
    case Type::Enum:
      if (const auto* s = node.as_string()) return Value{s->get()};
      break;
  }
  return std::nullopt;
}

constexpr std::string_view kPluginsTable = "plugins";

// "plugins.<name>" with a single valid segment after "plugins."; else empty.
std::string_view plugin_section_name(std::string_view rel) {
  if (rel.size() <= kPluginsTable.size() + 1 ||
      rel.substr(0, kPluginsTable.size()) != kPluginsTable || rel[kPluginsTable.size()] != '.')
    return {};
  std::string_view name = rel.substr(kPluginsTable.size() + 1);
  if (name.find('.') != std::string_view::npos) return {};
  return name;
}

class Walker {
 public:
  Walker(const Registry& registry, std::vector<Problem>& problems, FileLayers& out)
      : registry_(registry), problems_(problems), out_(out) {
    top_candidates_ = registry.known_paths;
    top_candidates_.emplace_back("cluster");
    top_candidates_.emplace_back("clusters");
  }

  void root(const toml::table& table) {
    for (auto&& [key, node] : table) {
      if (key.str() == "cluster")
        cluster_key(node);
      else if (key.str() == "clusters")
        clusters(node);
      else
        entry(key, node, "", "", out_.top, "");
    }
  }

 private:
  void walk(const toml::table& table, const std::string& rel_prefix,
            const std::string& shown_prefix, Layer& layer, const std::string& cluster) {
    for (auto&& [key, node] : table) entry(key, node, rel_prefix, shown_prefix, layer, cluster);
  }

  // One key of a table. `rel` is the knob path ("net.plugin"); `shown` is what
  // the user wrote it as ("clusters.trn2.net.plugin").
  void entry(const toml::key& key, const toml::node& node, const std::string& rel_prefix,
             const std::string& shown_prefix, Layer& layer, const std::string& cluster) {
    std::string rel =
        rel_prefix.empty() ? std::string(key.str()) : rel_prefix + "." + std::string(key.str());
    std::string shown = shown_prefix + rel;
    if (const Knob* knob = registry_.find(rel)) {
      assign(*knob, node, shown, layer, cluster);
    } else if (std::string_view plugin = plugin_section_name(rel); !plugin.empty()) {
      plugin_section(std::string(plugin), node, shown, cluster);
    } else if (!registry_.is_table(rel) && rel != kPluginsTable) {
      unknown(key.source(), rel, shown_prefix);
    } else if (const toml::table* sub = node.as_table()) {
      walk(*sub, rel, shown_prefix, layer, cluster);
    } else {
      add(node.source(), shown + ": expected a table, got " + describe_node(node));
    }
  }

  void assign(const Knob& knob, const toml::node& node, const std::string& shown, Layer& layer,
              const std::string& cluster) {
    std::optional<Value> value = typed_value(knob, node);
    if (!value) {
      add(node.source(), shown + ": expected " + type_noun(knob) + ", got " + describe_node(node));
      return;
    }
    Checked checked = check_value(knob, std::move(*value));
    if (!checked.value) {
      add(node.source(), shown + ": expected " + checked.expected + ", got " + describe_node(node));
      return;
    }
    Source source;
    source.kind = cluster.empty() ? Source::Kind::File : Source::Kind::Cluster;
    source.file = out_.path;
    source.line = static_cast<int>(node.source().begin.line);
    source.column = static_cast<int>(node.source().begin.column);
    source.cluster = cluster;
    layer[&knob] = Assigned{std::move(*checked.value), std::move(source)};
  }

  // [plugins.<name>]: every value is kept, unchecked, for the plugin's own
  // knob table; a nested table is kept as one value that no knob accepts.
  void plugin_section(const std::string& plugin, const toml::node& node, const std::string& shown,
                      const std::string& cluster) {
    const toml::table* body = node.as_table();
    if (body == nullptr) {
      add(node.source(), shown + ": expected a table of the settings of plugin " + quote(plugin) +
                             ", got " + describe_node(node));
      return;
    }
    for (auto&& [key, value] : *body)
      plugin_value(plugin, std::string(key.str()), value, shown + "." + std::string(key.str()),
                   cluster);
  }

  void plugin_value(const std::string& plugin, const std::string& key, const toml::node& node,
                    const std::string& shown, const std::string& cluster) {
    PluginSetting setting;
    setting.plugin = plugin;
    setting.key = key;
    setting.shown = shown;
    if (const auto* b = node.as_boolean()) {
      setting.value = Value{b->get()};
    } else if (const auto* i = node.as_integer()) {
      setting.value = Value{i->get()};
    } else if (const auto* str = node.as_string()) {
      setting.value = Value{str->get()};
    }
    setting.described = describe_node(node);
    setting.source.kind = cluster.empty() ? Source::Kind::File : Source::Kind::Cluster;
    setting.source.file = out_.path;
    setting.source.line = static_cast<int>(node.source().begin.line);
    setting.source.column = static_cast<int>(node.source().begin.column);
    setting.source.cluster = cluster;
    out_.plugin_settings.push_back(std::move(setting));
  }

  void unknown(const toml::source_region& where, const std::string& rel,
               const std::string& shown_prefix) {
    const auto& candidates = shown_prefix.empty() ? top_candidates_ : registry_.known_paths;
    std::string_view suggestion = closest(rel, candidates);
    std::string text = "unknown key " + quote(shown_prefix + rel);
    if (!suggestion.empty())
      text += "; did you mean " + quote(shown_prefix + std::string(suggestion)) + "?";
    add(where, std::move(text));
  }

  void cluster_key(const toml::node& node) {
    if (const auto* name = node.as_string()) {
      out_.cluster = name->get();
      out_.cluster_line = static_cast<int>(node.source().begin.line);
      out_.cluster_column = static_cast<int>(node.source().begin.column);
    } else {
      add(node.source(), "cluster: expected a string naming a [clusters.<name>] section, got " +
                             describe_node(node));
    }
  }

  void clusters(const toml::node& node) {
    const toml::table* sections = node.as_table();
    if (!sections) {
      add(node.source(),
          "clusters: expected a table of [clusters.<name>] sections, got " + describe_node(node));
      return;
    }
    for (auto&& [name, section] : *sections) {
      std::string cluster(name.str());
      if (const toml::table* body = section.as_table()) {
        walk(*body, "", "clusters." + cluster + ".", out_.clusters[cluster], cluster);
      } else {
        add(section.source(),
            "clusters." + cluster + ": expected a table, got " + describe_node(section));
      }
    }
  }

  void add(const toml::source_region& where, std::string what) {
    int line = static_cast<int>(where.begin.line);
    int column = static_cast<int>(where.begin.column);
    problems_.push_back(Problem{line, column,
                                out_.path + ":" + std::to_string(line) + ":" +
                                    std::to_string(column) + ": " + std::move(what)});
  }

  const Registry& registry_;
  std::vector<Problem>& problems_;
  FileLayers& out_;
  std::vector<std::string> top_candidates_;
};

}  // namespace

Result<FileLayers> read_layers(const Registry& registry, const std::string& path,
                               std::string_view text, std::vector<Problem>& problems) {
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    const toml::source_position& at = e.source().begin;
    return make_error(NRT_INVALID, path + ":" + std::to_string(at.line) + ":" +
                                       std::to_string(at.column) +
                                       ": TOML syntax error: " + std::string(e.description()));
  }
  FileLayers out;
  out.path = path;
  Walker(registry, problems, out).root(root);
  // toml++ walks a table in key order; keep the plugin settings in file order.
  std::stable_sort(out.plugin_settings.begin(), out.plugin_settings.end(),
                   [](const PluginSetting& a, const PluginSetting& b) {
                     if (a.source.line != b.source.line) return a.source.line < b.source.line;
                     return a.source.column < b.source.column;
                   });
  return out;
}

}  // namespace nccom::config::detail
