// nccom-config — show the configuration nccom would use, and check files.
//
//   nccom-config                  every knob: effective value, where it came from, help
//   nccom-config --check FILE     validate FILE as if NCCOM_CONFIG named it
//   nccom-config --cluster NAME   as if NCCOM_CLUSTER=NAME
//
// It resolves exactly as libnccom does (same knob tables, same discovery,
// same environment overrides), so what it prints is what the library gets.
#include "config/config.h"
#include "core/context.h"

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
               "  (default, file:line, cluster, env VAR) and its help text.\n"
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
  auto config = nccom::config::load(options);
  if (!config) {
    std::fprintf(stderr, "nccom-config: %s\n", config.error().message.c_str());
    return 1;
  }
  if (check_only) {
    std::printf("%s: OK (%zu knobs)\n", config->file().c_str(), config->entries().size());
    return 0;
  }
  std::printf("configuration file: %s\n",
              config->file().empty() ? "(none, built-in defaults)" : config->file().c_str());
  if (!config->cluster().empty()) {
    std::printf("cluster: %s (from %s)\n", config->cluster().c_str(),
                config->cluster_origin().c_str());
  }
  std::fputs(config->describe().c_str(), stdout);
  return 0;
}
