// nccom-config — show the configuration nccom would use, and check files.
//
//   nccom-config                  every knob: effective value, where it came from, help
//   nccom-config KEY...           those knobs: value and source
//   nccom-config --changed        the knobs whose value is not the built-in default
//   nccom-config --json           the same as one JSON object (with KEY... or --changed too)
//   nccom-config --check FILE     validate FILE as if NCCOM_CONFIG named it
//   nccom-config --cluster NAME   as if NCCOM_CLUSTER=NAME
//
// It resolves exactly as libnccom does (same knob tables, same discovery,
// same environment overrides), so what it prints is what the library gets.
// The plugins the configuration names are opened (never initialised) so
// their own knobs are listed and checked too. It also names what libnccom
// would not use (config/environment.h): variables of the environment that
// look like nccom's but that nothing reads (a misspelling, with the closest
// known name), NCCL's that nccom ignores, environment values a knob ignores
// (a bad NCCL_DEBUG), and [plugins.<name>] sections naming no plugin nccom
// can find.
#include "config/config.h"
#include "config/environment.h"
#include "config/value.h"
#include "core/context.h"
#include "plugins.h"

#include <strings.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

extern char** environ;

namespace {

using nccom::config::Entry;
using nccom::config::Type;
using nccom::config::Value;

int usage(FILE* out, int code) {
  std::fprintf(out,
               "usage: nccom-config [--check FILE] [--cluster NAME] [--changed] [--json] [KEY...]\n"
               "  Prints every nccom knob with its effective value, its source\n"
               "  (default, file:line, cluster, env VAR) and its help text, then the\n"
               "  knobs of every plugin the configuration would load, and the variables\n"
               "  of the environment nccom does not read.\n"
               "  KEY...          only these knobs: value and source\n"
               "  --changed       only the knobs whose value is not the built-in default\n"
               "  --json          one JSON object instead of text\n"
               "  --check FILE    load FILE as NCCOM_CONFIG would; exit 1 on any problem\n"
               "  --cluster NAME  select [clusters.NAME] as NCCOM_CLUSTER would\n"
               "Exit status: 0 fine; 1 the configuration (or a plugin's knobs) has a problem;\n"
               "2 usage, or a KEY that is no knob.\n");
  return code;
}

std::string json_text(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", c);
      out += esc;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// The knob's built-in default as a value, parsed as the loader parses it.
Value default_value(const Entry& e) {
  return *nccom::config::detail::parse_text(*e.knob, e.knob->default_text).value;
}

bool is_default(const Entry& e) {
  const Value def = default_value(e);
  if (e.knob->type == Type::Enum) {
    return strcasecmp(std::get<std::string>(e.value).c_str(), std::get<std::string>(def).c_str()) ==
           0;
  }
  return e.value == def;
}

// A value as the table shows it (strings quoted) or as JSON.
std::string shown(const Value& v) {
  const std::string text = nccom::config::detail::value_text(v);
  return std::holds_alternative<std::string>(v) ? "\"" + text + "\"" : text;
}
std::string json_of(const Value& v) {
  const std::string text = nccom::config::detail::value_text(v);
  return std::holds_alternative<std::string>(v) ? json_text(text) : text;
}

// What the command line asked for.
struct Options {
  std::map<std::string, std::string> overrides;  // NCCOM_CONFIG, NCCOM_CLUSTER
  bool check_only = false;
  bool changed = false;
  bool json = false;
  std::vector<std::string> keys;
};

// -1: go on; otherwise the exit status (help printed, or a usage error).
int parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") return usage(stdout, 0);
    if ((arg == "--check" || arg == "--cluster") && i + 1 < argc) {
      o.overrides[arg == "--check" ? nccom::config::kConfigFileEnv : nccom::config::kClusterEnv] =
          argv[++i];
      o.check_only = o.check_only || arg == "--check";
      continue;
    }
    if (arg == "--changed") {
      o.changed = true;
    } else if (arg == "--json") {
      o.json = true;
    } else if (!arg.empty() && arg[0] != '-') {
      o.keys.push_back(arg);
    } else {
      std::fprintf(stderr, "nccom-config: unexpected argument \"%s\"\n", argv[i]);
      return usage(stderr, 2);
    }
  }
  return -1;
}

// The configuration and what is around it: the plugins it loads and the
// environment nccom would not use.
struct View {
  const nccom::config::Config& config;
  const nccom::tools::PluginListing& listing;
  const std::vector<nccom::config::EnvFallback>& fallbacks;
  std::vector<nccom::config::EnvNote> notes;
};

// --check FILE alone: one verdict line, or the problems and exit 1.
int check(const View& v) {
  // The environment is not the file's: what it sets that is ignored is a
  // note, never the verdict.
  for (const auto& f : v.fallbacks)
    std::fprintf(stderr, "nccom-config: note: %s\n", f.message.c_str());
  if (!v.listing.ok) {
    std::fprintf(stderr, "nccom-config: %s", v.listing.text.c_str());
    return 1;
  }
  // A section for a plugin that cannot be found configures nothing: in a
  // file being checked that is a mistake (usually the plugin's name
  // misspelt).
  if (!v.listing.unknown_sections.empty()) {
    for (const auto& note : v.listing.unknown_sections)
      std::fprintf(stderr, "nccom-config: %s\n", nccom::config::section_note_text(note).c_str());
    return 1;
  }
  std::printf("%s: OK (%zu knobs)\n", v.config.file().c_str(), v.config.entries().size());
  return 0;
}

void print_json(const View& v, const std::vector<const Entry*>& chosen) {
  const nccom::config::Config& config = v.config;
  std::string out = "{\"file\":" + json_text(config.file()) +
                    ",\"cluster\":" + json_text(config.cluster()) +
                    ",\"digest\":" + json_text(nccom::config::digest(config)) + ",\"knobs\":[";
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const Entry& e = *chosen[i];
    out += (i == 0 ? "" : ",") + std::string("{\"key\":") + json_text(std::string(e.key())) +
           ",\"value\":" + json_of(e.value) + ",\"default\":" + json_of(default_value(e)) +
           ",\"changed\":" + (is_default(e) ? "false" : "true") +
           ",\"source\":" + json_text(e.source.to_string()) + "}";
  }
  out += "],\"environment\":[";
  const char* sep = "";
  for (const auto& f : v.fallbacks) {
    out += sep + std::string("{\"name\":") + json_text(f.variable) +
           ",\"note\":\"ignored-value\",\"suggestion\":\"\",\"value\":" + json_text(f.value) +
           ",\"message\":" + json_text(f.message) + "}";
    sep = ",";
  }
  for (const auto& n : v.notes) {
    out += sep + std::string("{\"name\":") + json_text(n.name) +
           ",\"note\":" + json_text(n.nccl ? "nccl-not-read" : "unknown") +
           ",\"suggestion\":" + json_text(n.suggestion) + "}";
    sep = ",";
  }
  out += "],\"unknown_plugin_sections\":[";
  sep = "";
  for (const auto& s : v.listing.unknown_sections) {
    out += sep + std::string("{\"section\":") + json_text(s.section) +
           ",\"plugin\":" + json_text(s.plugin) + ",\"where\":" + json_text(s.where) +
           ",\"suggestion\":" + json_text(s.suggestion) + "}";
    sep = ",";
  }
  out += "],\"plugins_ok\":" + std::string(v.listing.ok ? "true" : "false") + "}\n";
  std::fputs(out.c_str(), stdout);
}

// KEY... or --changed: one line per knob, then what nccom would not use.
void print_chosen(const View& v, const std::vector<const Entry*>& chosen, bool changed) {
  if (changed && chosen.empty()) {
    std::printf("every knob has its built-in default (file: %s)\n",
                v.config.file().empty() ? "none" : v.config.file().c_str());
  }
  for (const Entry* e : chosen) {
    std::string note;
    if (!is_default(*e)) {
      note = ", built-in default " + shown(default_value(*e));
    } else if (e->source.kind != nccom::config::Source::Kind::Default) {
      note = ", the built-in default too";
    }
    std::printf("%s = %s  (%s%s)\n", std::string(e->key()).c_str(), shown(e->value).c_str(),
                e->source.to_string().c_str(), note.c_str());
  }
  for (const auto& f : v.fallbacks) std::printf("environment: %s\n", f.message.c_str());
  for (const auto& n : v.notes)
    std::printf("environment: %s\n", nccom::config::note_text(n).c_str());
  for (const auto& s : v.listing.unknown_sections)
    std::printf("file: %s\n", nccom::config::section_note_text(s).c_str());
}

// Every knob with its help, the plugins' knobs, then the environment.
void print_all(const View& v) {
  const nccom::config::Config& config = v.config;
  std::printf("configuration file: %s\n",
              config.file().empty() ? "(none, built-in defaults)" : config.file().c_str());
  if (!config.cluster().empty()) {
    std::printf("cluster: %s (from %s)\n", config.cluster().c_str(),
                config.cluster_origin().c_str());
  }
  std::fputs(config.describe().c_str(), stdout);
  std::fputs(v.listing.text.c_str(), stdout);
  if (!v.notes.empty() || !v.fallbacks.empty()) {
    std::printf("\nenvironment\n");
    for (const auto& f : v.fallbacks) std::printf("  %s\n", f.message.c_str());
    for (const auto& n : v.notes) std::printf("  %s\n", nccom::config::note_text(n).c_str());
  }
}

// 0, or 2 after naming a KEY that is no knob (with the closest name).
int check_keys(const nccom::config::Config& config, const std::vector<std::string>& keys) {
  for (const std::string& key : keys) {
    if (config.has(key)) continue;
    std::vector<std::string> all;
    for (const Entry& e : config.entries()) all.emplace_back(e.key());
    const std::string near = nccom::config::closest_name(key, all);
    std::fprintf(stderr, "nccom-config: no knob named \"%s\"%s\n", key.c_str(),
                 near.empty() ? "" : ("; did you mean \"" + near + "\"?").c_str());
    return 2;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (const int code = parse(argc, argv, o); code >= 0) return code;

  nccom::config::LoadOptions options = nccom::core::default_load_options();
  options.getenv = [&o](const char* name) -> const char* {
    auto it = o.overrides.find(name);
    return it != o.overrides.end() ? it->second.c_str() : std::getenv(name);
  };
  auto loaded = nccom::config::load(options);
  if (!loaded) {
    std::fprintf(stderr, "nccom-config: %s\n", loaded.error().message.c_str());
    return 1;
  }
  const nccom::config::Config& config = loaded.value();
  if (const int code = check_keys(config, o.keys); code != 0) return code;
  const nccom::tools::PluginListing listing = nccom::tools::describe_plugins(config);
  // Plugin claims hold the variables of every plugin describe_plugins bound.
  const View v{config, listing, config.env_fallbacks(),
               nccom::config::environment_notes(nccom::config::knob_variables(config),
                                                nccom::config::environ_names(environ))};
  if (o.check_only && o.keys.empty() && !o.changed && !o.json) return check(v);
  // With --check, a section naming no plugin fails every form (KEY...,
  // --changed, --json) as it fails the plain check.
  const int status = listing.ok && !(o.check_only && !listing.unknown_sections.empty()) ? 0 : 1;

  // The knobs asked for: KEY..., else the changed ones with --changed, else all.
  std::vector<const Entry*> chosen;
  for (const Entry& e : config.entries()) {
    const bool named =
        std::find(o.keys.begin(), o.keys.end(), std::string(e.key())) != o.keys.end();
    if (!o.keys.empty() ? named : (!o.changed || !is_default(e))) chosen.push_back(&e);
  }
  if (o.json) {
    print_json(v, chosen);
  } else if (!o.keys.empty() || o.changed) {
    print_chosen(v, chosen, o.changed);
  } else {
    print_all(v);
  }
  return status;
}
