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
// their own knobs are listed and checked too. It also names variables of
// the environment that look like nccom's but that nothing reads (a
// misspelling, with the closest known name), and NCCL's that nccom ignores.
#include "config/config.h"
#include "config/value.h"
#include "core/context.h"
#include "environment.h"
#include "plugins.h"

#include <strings.h>

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

std::vector<std::string> environ_names() {
  std::vector<std::string> names;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq != nullptr && eq[1] != '\0') names.emplace_back(*e, static_cast<std::size_t>(eq - *e));
  }
  return names;
}

std::string note_text(const nccom::tools::EnvNote& n) {
  if (n.nccl) return n.name + " is an NCCL setting nccom does not read";
  return n.name + " is not a variable nccom reads" +
         (n.suggestion.empty() ? std::string() : "; did you mean " + n.suggestion + "?");
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> overrides;
  bool check_only = false;
  bool changed = false;
  bool json = false;
  std::vector<std::string> keys;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") return usage(stdout, 0);
    if ((arg == "--check" || arg == "--cluster") && i + 1 < argc) {
      overrides[arg == "--check" ? nccom::config::kConfigFileEnv : nccom::config::kClusterEnv] =
          argv[++i];
      check_only = check_only || arg == "--check";
      continue;
    }
    if (arg == "--changed") {
      changed = true;
    } else if (arg == "--json") {
      json = true;
    } else if (!arg.empty() && arg[0] != '-') {
      keys.push_back(arg);
    } else {
      std::fprintf(stderr, "nccom-config: unexpected argument \"%s\"\n", argv[i]);
      return usage(stderr, 2);
    }
  }

  nccom::config::LoadOptions options = nccom::core::default_load_options();
  options.getenv = [&overrides](const char* name) -> const char* {
    auto it = overrides.find(name);
    return it != overrides.end() ? it->second.c_str() : std::getenv(name);
  };
  auto loaded = nccom::config::load(options);
  if (!loaded) {
    std::fprintf(stderr, "nccom-config: %s\n", loaded.error().message.c_str());
    return 1;
  }
  const nccom::config::Config& config = loaded.value();
  for (const std::string& key : keys) {
    if (config.has(key)) continue;
    std::vector<std::string> all;
    for (const Entry& e : config.entries()) all.emplace_back(e.key());
    const std::string near = nccom::tools::closest_name(key, all);
    std::fprintf(stderr, "nccom-config: no knob named \"%s\"%s\n", key.c_str(),
                 near.empty() ? "" : ("; did you mean \"" + near + "\"?").c_str());
    return 2;
  }
  std::string plugins;
  std::set<std::string> env_names;
  const bool plugins_ok = nccom::tools::describe_plugins(config, plugins, &env_names);
  if (check_only && keys.empty() && !changed && !json) {
    if (!plugins_ok) {
      std::fprintf(stderr, "nccom-config: %s", plugins.c_str());
      return 1;
    }
    std::printf("%s: OK (%zu knobs)\n", config.file().c_str(), config.entries().size());
    return 0;
  }
  for (const Entry& e : config.entries()) {
    for (std::string_view env : e.knob->env) env_names.insert(std::string(env));
  }
  const auto notes = nccom::tools::environment_notes(env_names, environ_names());

  // The knobs asked for: KEY..., else the changed ones with --changed, else all.
  std::vector<const Entry*> chosen;
  for (const Entry& e : config.entries()) {
    const bool named = std::find(keys.begin(), keys.end(), std::string(e.key())) != keys.end();
    if (!keys.empty() ? named : (!changed || !is_default(e))) chosen.push_back(&e);
  }

  if (json) {
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
    for (std::size_t i = 0; i < notes.size(); ++i) {
      out += (i == 0 ? "" : ",") + std::string("{\"name\":") + json_text(notes[i].name) +
             ",\"note\":" + json_text(notes[i].nccl ? "nccl-not-read" : "unknown") +
             ",\"suggestion\":" + json_text(notes[i].suggestion) + "}";
    }
    out += "],\"plugins_ok\":" + std::string(plugins_ok ? "true" : "false") + "}\n";
    std::fputs(out.c_str(), stdout);
    return plugins_ok ? 0 : 1;
  }

  if (!keys.empty() || changed) {
    if (changed && chosen.empty()) {
      std::printf("every knob has its built-in default (file: %s)\n",
                  config.file().empty() ? "none" : config.file().c_str());
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
    for (const auto& n : notes) std::printf("environment: %s\n", note_text(n).c_str());
    return plugins_ok ? 0 : 1;
  }

  std::printf("configuration file: %s\n",
              config.file().empty() ? "(none, built-in defaults)" : config.file().c_str());
  if (!config.cluster().empty()) {
    std::printf("cluster: %s (from %s)\n", config.cluster().c_str(),
                config.cluster_origin().c_str());
  }
  std::fputs(config.describe().c_str(), stdout);
  std::fputs(plugins.c_str(), stdout);
  if (!notes.empty()) {
    std::printf("\nenvironment\n");
    for (const auto& n : notes) std::printf("  %s\n", note_text(n).c_str());
  }
  return plugins_ok ? 0 : 1;
}
