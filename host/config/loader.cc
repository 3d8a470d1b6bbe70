// config::load(): find the file, pick the cluster, apply the environment,
// merge the layers, and report every problem at once.
#include "config/config.h"
#include "config/file_layers.h"
#include "config/registry.h"
#include "config/resolve.h"
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
using detail::Ignored;
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

// The file's layers (none without a file), or why it cannot be read.
Result<FileLayers> file_layers(const detail::Registry& registry, const std::string& path,
                               const std::string& why, std::vector<Problem>& problems) {
  if (path.empty()) return FileLayers{};
  Result<std::string> text =
      read_bounded_file(path, kMaxConfigFileBytes, "configuration file " + path + why);
  if (!text) return text.take_error();
  return detail::read_layers(registry, path, text.value(), problems);
}

// The active cluster (NCCOM_CLUSTER, else the file's `cluster`) and where
// its name came from.
struct Cluster {
  std::string name;
  std::string origin;
  const Layer* layer = nullptr;  // its section; null when none is active
};

Cluster active_cluster(const LoadOptions& options, const std::string& path, const FileLayers& file,
                       std::vector<Problem>& problems) {
  Cluster c;
  if (std::optional<std::string> name = env_value(options, kClusterEnv)) {
    c.name = *name;
    c.origin = kClusterEnv;
  } else if (!file.cluster.empty()) {
    c.name = file.cluster;
    c.origin =
        path + ":" + std::to_string(file.cluster_line) + ":" + std::to_string(file.cluster_column);
  }
  if (c.name.empty()) return c;
  if (auto it = file.clusters.find(c.name); it != file.clusters.end()) {
    c.layer = &it->second;
    return c;
  }
  std::string text = "unknown cluster " + quote(c.name) + " (from " + c.origin + "); ";
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
  return c;
}

// Every problem as one error: the file's in file order, then the others in
// the order found.
Error problems_error(std::vector<Problem> problems) {
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

}  // namespace

Result<Config> load(const LoadOptions& options) {
  auto built = detail::build_registry(options.tables);
  if (!built) return detail::registry_error(built.error());
  const detail::Registry& registry = built.value();
  std::vector<Problem> problems;
  std::string why;
  std::string path = discover(options, why);
  Result<FileLayers> read = file_layers(registry, path, why, problems);
  if (!read) return read.take_error();
  FileLayers file = std::move(read).value();
  Cluster cluster = active_cluster(options, path, file, problems);
  std::vector<Ignored> ignored;
  const Layer env = detail::read_env(registry, options.getenv, problems, ignored);
  if (!problems.empty()) return problems_error(std::move(problems));

  std::vector<Entry> entries = detail::resolve(registry, {&file.top, cluster.layer, &env});
  std::vector<EnvFallback> fallbacks;
  for (const Ignored& i : ignored) {
    auto at = std::find_if(entries.begin(), entries.end(),
                           [&](const Entry& e) { return e.knob == i.knob; });
    fallbacks.push_back(fallback_of(i, *at));
  }
  return Config(std::move(entries), std::move(path), std::move(cluster.name),
                std::move(cluster.origin), std::move(file.plugin_settings), options.getenv,
                std::move(fallbacks));
}

}  // namespace nccom::config
