// nccom::config — the effective configuration: knob defaults, the TOML file,
// the active cluster section of that file, and the environment.
//
// Precedence, lowest first: knob default < file top level < active
// [clusters.<name>] section < environment variable. Every value remembers
// where it came from. This module never logs (the logger is configured from
// its result): every problem comes back in the Error, one per line, and what
// the caller should tell the operator comes back as values
// (Config::env_fallbacks(), config/environment.h).
//
// See docs/decisions/config.md for the decisions (unknown keys, empty
// environment values, boolean spellings).
#pragma once

#include "config/knob.h"

#include <nccom/util/result.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

namespace nccom::config {

// Environment variables of the loader itself.
inline constexpr const char* kConfigFileEnv = "NCCOM_CONFIG";  // file to use (must exist)
inline constexpr const char* kClusterEnv = "NCCOM_CLUSTER";    // active cluster section
// The system-wide file; the host also tries the installed share/nccom/nccom.toml.
inline constexpr const char* kSystemConfigPath = "/etc/nccom/nccom.toml";
// A configuration file larger than this is refused: the shipped file, which
// lists every knob with its help, is about 10 KiB, so a bigger one is not a
// configuration file (or not the intended one).
inline constexpr std::size_t kMaxConfigFileBytes = std::size_t{4} << 20;

// Where a value came from.
struct Source {
  enum class Kind { Default, File, Cluster, Env };
  Kind kind = Kind::Default;
  std::string file;     // File, Cluster
  int line = 0;         // File, Cluster (1-based)
  int column = 0;       // File, Cluster (1-based)
  std::string cluster;  // Cluster
  std::string env_var;  // Env

  // "default", "/etc/nccom/nccom.toml:12", "cluster trn2 /etc/nccom/nccom.toml:40",
  // "env NCCL_DEBUG".
  std::string to_string() const;

  // What follows "set by" in an INFO line about the value of `variable`
  // (NCCL's "NCCL_SOCKET_IFNAME set by environment to lo"): "environment"
  // when `variable` itself set it, "environment CCOM_SOCKET_IFNAME" for
  // another variable of the knob, "/etc/nccom/nccom.toml:12", "/etc/nccom/
  // nccom.toml:40 (cluster trn2)", "default".
  std::string set_by(std::string_view variable) const;
};

// Returns the value of an environment variable or nullptr.
using EnvLookup = std::function<const char*(const char*)>;

// bool for Type::Bool, int64 for Type::Int, string for String and Enum.
using Value = std::variant<bool, std::int64_t, std::string>;

struct Entry {
  const Knob* knob = nullptr;  // into a registered table (static storage)
  Value value;
  Source source;

  std::string_view key() const { return knob->key; }
  // The value as text: strings verbatim, integers in decimal, true/false.
  std::string text() const;
};

// A value the file sets under [plugins.<plugin>] (at the top level or in any
// [clusters.<name>.plugins.<plugin>] section). The host cannot check it when
// it loads the file: the plugin declares its knobs when it is loaded
// (PluginSection, plugin_knobs.h), and only then is the value checked.
struct PluginSetting {
  std::string plugin;          // "socket"
  std::string key;             // "nthreads"; nested tables give dotted keys
  std::string shown;           // as written: "clusters.trn2.plugins.socket.nthreads"
  std::optional<Value> value;  // absent: a TOML type no knob has (float, array, date...)
  std::string described;       // "integer 99", for messages
  Source source;               // File or Cluster
};

// An environment value the configuration did not use: a knob with
// kEnvFallsBack whose variable held a bad value (knob.h). The knob keeps
// the value of the lower layers or, for a name list, the known names.
struct EnvFallback {
  std::string variable;  // "NCCL_DEBUG"
  std::string value;     // as set: "verbose"
  // One line for the operator: the variable, the value, what is accepted
  // and what is used instead, e.g. `NCCL_DEBUG="verbose" is not a log
  // level: expected one of ...; ignored, log.level is "WARN" (default)`.
  std::string message;
};

// What the plugins bound against a configuration declared
// (PluginSection::bind records it): their section names and the
// environment variables their knobs read.
struct PluginClaims {
  std::set<std::string, std::less<>> sections;   // "socket", "neuron"
  std::set<std::string, std::less<>> variables;  // "NCCL_SOCKET_NTHREADS", ...
};

class Config {
 public:
  // Built by load(); entries in registration order, keys unique.
  Config(std::vector<Entry> entries, std::string file, std::string cluster,
         std::string cluster_origin, std::vector<PluginSetting> plugin_settings = {},
         EnvLookup getenv = nullptr, std::vector<EnvFallback> env_fallbacks = {});

  // Typed getters. Asking for an undeclared key or with the wrong type is a
  // programming error: it throws std::logic_error naming the key (no assert,
  // so the error is testable and identical in every build type).
  bool get_bool(std::string_view key) const;
  std::int64_t get_int(std::string_view key) const;
  const std::string& get_string(std::string_view key) const;  // String and Enum
  // The effective value of any knob as text (what a plugin is handed).
  std::string get_text(std::string_view key) const;
  // Throws std::logic_error for an undeclared key.
  const Entry& entry(std::string_view key) const;
  bool has(std::string_view key) const { return index_.count(key) != 0; }

  const std::vector<Entry>& entries() const { return entries_; }
  // The knobs whose key is `prefix` or starts with `prefix` + ".", in order.
  std::vector<Entry> section(std::string_view prefix) const;

  const std::string& file() const { return file_; }        // empty: no file was read
  const std::string& cluster() const { return cluster_; }  // empty: no active cluster
  // Where the cluster name came from: "NCCOM_CLUSTER" or "file:line".
  const std::string& cluster_origin() const { return cluster_origin_; }

  // A text table of every knob: key, effective value, source and help
  // (`nccom-config`).
  std::string describe() const;

  // The file's [plugins.<name>] values, in file order, every cluster section
  // included; checked by PluginSection::bind when the plugin is loaded.
  const std::vector<PluginSetting>& plugin_settings() const { return plugin_settings_; }
  // The environment this configuration was resolved with (plugin knobs are
  // resolved later, against the same one). Never empty.
  const char* env(const char* name) const;

  // Environment values that were ignored (knobs with kEnvFallsBack), in
  // knob order. Not errors: the caller reports them (libnccom as WARN lines,
  // nccom-config as notes).
  const std::vector<EnvFallback>& env_fallbacks() const { return env_fallbacks_; }

  // The plugins bound against this configuration so far, and the variables
  // their knobs read: a snapshot. Copies of a Config share one record.
  PluginClaims plugin_claims() const;
  // Records a bound plugin (PluginSection::bind calls it). Thread-safe.
  void claim_plugin(std::string_view section, const std::vector<std::string>& variables) const;

 private:
  std::vector<Entry> entries_;
  std::unordered_map<std::string_view, std::size_t> index_;
  std::string file_;
  std::string cluster_;
  std::string cluster_origin_;
  std::vector<PluginSetting> plugin_settings_;
  EnvLookup getenv_;
  std::vector<EnvFallback> env_fallbacks_;
  struct Claims;
  std::shared_ptr<Claims> claims_;  // never null
};

struct LoadOptions {
  // The loaded Config keeps a copy of this lookup and calls it again when a
  // plugin's section is bound, so whatever it reads must outlive the Config.
  EnvLookup getenv = [](const char* name) -> const char* { return std::getenv(name); };
  // Tried in order when NCCOM_CONFIG is unset; the first that exists is used.
  std::vector<std::string> default_paths;
  // Knob tables of every component (host_knobs() first). Keys must be unique.
  std::vector<KnobTable> tables;
};

// A digest of the resolved configuration: FNV-1a (64 bits) over
// "key=value\n" of every knob (Entry::text(), keys sorted), as
// "fnv1a64:" and 16 hex digits. Two configurations with the same digest
// give every knob the same value, wherever each value came from (default,
// file, cluster, environment). Knobs that name the job rather than its
// behaviour (kJobIdentity: the root address, the health address, the
// bootstrap secret) are left out, so two runs of one configuration agree and
// no secret enters a published hash. Plugin settings ([plugins.<name>]) are
// not in it: they are resolved when the plugin is loaded. `nccom-config --json`
// and `nccom-test --json` print it (digest.cc).
std::string digest(const Config& config);

// Builds the effective configuration. Fails (NRT_INVALID) with every problem
// found, one per line: unreadable or malformed file, unknown keys, wrong
// types, values out of range, unknown cluster, bad environment values (but
// those of knobs with kEnvFallsBack, which are ignored and listed in
// Config::env_fallbacks()), and inconsistent knob tables.
Result<Config> load(const LoadOptions& options);

}  // namespace nccom::config
