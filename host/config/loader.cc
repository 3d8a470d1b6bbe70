// config::load(): find the file, pick the cluster, apply the environment,
// merge the layers, and report every problem at once.
#include "config/config.h"
#include "config/file_layers.h"
#include "config/registry.h"
#include "config/value.h"

#include <nccom/nrt_abi.h>
#include <nccom/util/bounded_file.h>

#include <algorithm>
#include <filesystem>
#include <optional>

namespace nccom::config {
namespace {

using detail::Assigned;
using detail::FileLayers;
using detail::Layer;
using detail::Problem;
using detail::quote;

// An environment lookup where an empty value counts as unset (as NCCL's
// parameters do), so `VAR=` never overrides the file with nothing.
std::optional<std::string> env_value(const LoadOptions& options, const char* name) {
  const char* value = options.getenv ? options.getenv(name) : nullptr;
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

// NCCOM_CONFIG if set (the file must exist), else the first default path
// that exists, else none (empty string).
std::string discover(const LoadOptions& options, std::string& why) {
  if (std::optional<std::string> path = env_value(options, kConfigFileEnv)) {
    why = std::string(" (from ") + kConfigFileEnv + ")";
    return *path;
  }
  for (const std::string& path : options.default_paths) {
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) return path;
  }
  return {};
}

std::string no_file_note(const LoadOptions& options) {
  if (options.default_paths.empty())
    return std::string("no configuration file was read (") + kConfigFileEnv +
           " is unset and there are no default paths)";
  std::string tried;
  for (const std::string& path : options.default_paths) tried += (tried.empty() ? "" : ", ") + path;
  return std::string("no configuration file was read (") + kConfigFileEnv + " is unset; tried " +
         tried + ")";
}

// A bad environment value of a knob with kEnvFallsBack, until the merge
// tells what is used instead.
struct Ignored {
  const Knob* knob;
  std::string variable;
  std::string value;
  std::vector<std::string> unknown;  // a name list's unknown names; empty: the whole value
  bool kept_known = false;           // a name list whose known names are used
};

// The environment layer. The first variable of a knob that is set wins; a
// bad value is a problem (and does not fall through to the next variable),
// or, for a knob with kEnvFallsBack, ignored and noted in `ignored`.
Layer read_env(const LoadOptions& options, const detail::Registry& registry,
               std::vector<Problem>& problems, std::vector<Ignored>& ignored) {
  Layer layer;
  for (const Knob* knob : registry.knobs) {
    for (std::string_view name : knob->env) {
      std::string var(name);
      std::optional<std::string> text = env_value(options, var.c_str());
      if (!text) continue;
      Source source;
      source.kind = Source::Kind::Env;
      source.env_var = var;
      detail::Checked checked = detail::parse_text(*knob, *text);
      if (checked.value) {
        layer[knob] = Assigned{std::move(*checked.value), std::move(source)};
      } else if (knob->flags & kEnvFallsBack) {
        Ignored note{knob, var, *text, {}, false};
        if (knob->flags & kNameList) {
          // NCCL drops the names it does not know and keeps the others.
          detail::NameList names = detail::split_names(*knob, *text);
          note.unknown = names.unknown;
          if (names.inverted || !names.known.empty()) {
            std::string kept = names.inverted ? "^" : "";
            for (std::size_t i = 0; i < names.known.size(); ++i)
              kept += (i == 0 ? "" : ",") + names.known[i];
            layer[knob] = Assigned{Value{std::move(kept)}, std::move(source)};
            note.kept_known = true;
          }
        }
        ignored.push_back(std::move(note));
      } else {
        problems.push_back(Problem{0, 0,
                                   var + "=" + quote(*text) + ": expected " + checked.expected +
                                       " (for " + std::string(knob->key) + ")"});
      }
      break;
    }
  }
  return layer;
}

// Where the value used instead of an ignored one came from.
std::string used_from(const Entry& entry) {
  const std::string key(entry.key());
  switch (entry.source.kind) {
    case Source::Kind::Default: return "the default of " + key;
    case Source::Kind::File:
      return key + " at " + entry.source.file + ":" + std::to_string(entry.source.line);
    case Source::Kind::Cluster:
      return key + " at " + entry.source.file + ":" + std::to_string(entry.source.line) +
             ", cluster " + entry.source.cluster;
    case Source::Kind::Env: return "the known names of " + entry.source.env_var;
  }
  return key;
}

EnvFallback fallback_of(const Ignored& ignored, const Entry& entry) {
  std::string message = ignored.variable + "=" + quote(ignored.value);
  if (ignored.unknown.empty()) {
    message += " is not valid";
  } else {
    std::string names;
    for (const std::string& name : ignored.unknown)
      names += (names.empty() ? "" : ", ") + quote(name);
    message += ": " + names +
               (ignored.unknown.size() == 1 ? " is not a known name" : " are not known names");
  }
  message += ": expected " + detail::expectation(*ignored.knob) + "; " +
             (ignored.kept_known ? "dropped" : "ignored") + ", using " + quote(entry.text()) +
             " (" + used_from(entry) + ")";
  return EnvFallback{ignored.variable, ignored.value, std::move(message)};
}

}  // namespace

Result<Config> load(const LoadOptions& options) {
  Result<detail::Registry> built = detail::build_registry(options.tables);
  if (!built) return built.take_error();
  const detail::Registry& registry = built.value();
  std::vector<Problem> problems;

  // The file: top level and cluster sections.
  std::string why;
  std::string path = discover(options, why);
  FileLayers file;
  if (!path.empty()) {
    Result<std::string> text =
        read_bounded_file(path, kMaxConfigFileBytes, "configuration file " + path + why);
    if (!text) return text.take_error();
    Result<FileLayers> layers = detail::read_layers(registry, path, text.value(), problems);
    if (!layers) return layers.take_error();
    file = std::move(layers).value();
  }

  // The active cluster.
  std::string cluster;
  std::string origin;
  if (std::optional<std::string> name = env_value(options, kClusterEnv)) {
    cluster = *name;
    origin = kClusterEnv;
  } else if (!file.cluster.empty()) {
    cluster = file.cluster;
    origin =
        path + ":" + std::to_string(file.cluster_line) + ":" + std::to_string(file.cluster_column);
  }
  const Layer* cluster_layer = nullptr;
  if (!cluster.empty()) {
    auto it = file.clusters.find(cluster);
    if (it != file.clusters.end()) {
      cluster_layer = &it->second;
    } else {
      std::string text = "unknown cluster " + quote(cluster) + " (from " + origin + "); ";
      if (path.empty()) {
        text += no_file_note(options);
      } else if (file.clusters.empty()) {
        text += path + " has no [clusters.<name>] sections";
      } else {
        text += "clusters in " + path + ":";
        const char* sep = " ";
        for (const auto& [name, layer] : file.clusters) text += sep + name, sep = ", ";
      }
      problems.push_back(Problem{0, 0, std::move(text)});
    }
  }

  std::vector<Ignored> ignored;
  Layer env = read_env(options, registry, problems, ignored);

  if (!problems.empty()) {
    // File problems in file order, then the others in the order found.
    std::stable_sort(problems.begin(), problems.end(), [](const Problem& a, const Problem& b) {
      auto rank = [](const Problem& p) { return p.line == 0 ? 1 : 0; };
      if (rank(a) != rank(b)) return rank(a) < rank(b);
      if (a.line != b.line) return a.line < b.line;
      return a.column < b.column;
    });
    std::string message;
    for (const Problem& p : problems) message += (message.empty() ? "" : "\n") + p.text;
    return make_error(NRT_INVALID, std::move(message));
  }

  // Merge: default < file top level < cluster section < environment.
  std::vector<Entry> entries;
  entries.reserve(registry.knobs.size());
  for (std::size_t i = 0; i < registry.knobs.size(); ++i) {
    const Knob* knob = registry.knobs[i];
    Entry entry{knob, registry.defaults[i], Source{}};
    const Layer* layers[] = {&file.top, cluster_layer, &env};
    for (const Layer* layer : layers) {
      if (layer == nullptr) continue;
      auto it = layer->find(knob);
      if (it != layer->end()) {
        entry.value = it->second.value;
        entry.source = it->second.source;
      }
    }
    entries.push_back(std::move(entry));
  }
  std::vector<EnvFallback> fallbacks;
  for (const Ignored& i : ignored) {
    auto at = std::find_if(entries.begin(), entries.end(),
                           [&](const Entry& e) { return e.knob == i.knob; });
    fallbacks.push_back(fallback_of(i, *at));
  }
  return Config(std::move(entries), std::move(path), std::move(cluster), std::move(origin),
                std::move(file.plugin_settings), options.getenv, std::move(fallbacks));
}

}  // namespace nccom::config
