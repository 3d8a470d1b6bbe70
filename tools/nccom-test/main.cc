// nccom-test: collective benchmark and check through the reference runtime
// (the option names of Neuron's nccom-test and nccl-tests). Usage:
// docs/tools/nccom-test.md.
//
// Exit status: 0 success; 1 a rank failed, the run exceeded its bound, or
// --check found wrong elements; 2 a usage error (one line on stderr).
#include "bench.h"
#include "launch_env.h"
#include "local_launcher.h"
#include "options.h"

#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  using namespace nccom::nccomtest;
  const std::vector<std::string> args(argv + 1, argv + argc);
  auto opts = parse_options(args);
  if (!opts) {
    std::fprintf(stderr, "nccom-test: %s\n", opts.error().message.c_str());
    return 2;
  }
  if (opts->help) {
    std::fputs(usage_text(), stdout);
    return 0;
  }
  auto place = detect_placement(current_env(), *opts);
  if (!place) {
    std::fprintf(stderr, "nccom-test: %s\n", place.error().message.c_str());
    return 2;
  }
  const bool writes_plot = place->launcher == Launcher::LocalParent || place->rank == 0;
  if (!opts->plot.empty() && writes_plot) {
    if (const std::string why = check_plot_path(opts->plot); !why.empty()) {
      std::fprintf(stderr, "nccom-test: %s\n", why.c_str());
      return 2;
    }
  }
  if (place->launcher == Launcher::LocalParent) return run_local(*opts, argv[0], args);
  return run_rank(*opts, *place);
}
