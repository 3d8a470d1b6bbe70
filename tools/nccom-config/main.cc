// nccom-config — show the configuration nccom would use, and check files.
//
//   nccom-config                  every knob: effective value, where it came from, help
//   nccom-config --check FILE     validate FILE as if NCCOM_CONFIG named it
//   nccom-config --cluster NAME   as if NCCOM_CLUSTER=NAME
//
// It resolves exactly as libnccom does (same knob tables, same discovery,
// same environment overrides), so what it prints is what the library gets.
// The plugins the configuration names are opened (never initialised) so
// their own knobs are listed and checked too.
#include "config/config.h"
#include "core/context.h"
#include "plugins.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

namespace {

int usage(FILE* out, int code) {
  std::fprintf(out,
               "usage: nccom-config [--check FILE] [--cluster NAME]\n"
               "  Prints every nccom knob with its effective value, its source\n"
               "  (default, file:line, cluster, env VAR) and its help text, then the\n"
               "  knobs of every plugin the configuration would load.\n"
               "  --check FILE    load FILE as NCCOM_CONFIG would; exit 1 on any problem\n"
               "  --cluster NAME  select [clusters.NAME] as NCCOM_CLUSTER would\n");
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> overrides;
  bool check_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") return usage(stdout, 0);
    if ((arg == "--check" || arg == "--cluster") && i + 1 < argc) {
      overrides[arg == "--check" ? nccom::config::kConfigFileEnv : nccom::config::kClusterEnv] =
          argv[++i];
      check_only = check_only || arg == "--check";
      continue;
    }
    std::fprintf(stderr, "nccom-config: unexpected argument \"%s\"\n", argv[i]);
    return usage(stderr, 2);
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
  std::string plugins;
  const bool plugins_ok = nccom::tools::describe_plugins(config, plugins);
  if (check_only) {
    if (!plugins_ok) {
      std::fprintf(stderr, "nccom-config: %s", plugins.c_str());
      return 1;
    }
    std::printf("%s: OK (%zu knobs)\n", config.file().c_str(), config.entries().size());
    return 0;
  }
  std::printf("configuration file: %s\n",
              config.file().empty() ? "(none, built-in defaults)" : config.file().c_str());
  if (!config.cluster().empty()) {
    std::printf("cluster: %s (from %s)\n", config.cluster().c_str(),
                config.cluster_origin().c_str());
  }
  std::fputs(config.describe().c_str(), stdout);
  std::fputs(plugins.c_str(), stdout);
  return plugins_ok ? 0 : 1;
}
