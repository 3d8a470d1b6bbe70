// nccom-test: collective benchmark and check through the reference runtime
// (the option names of Neuron's nccom-test and nccl-tests). Usage:
// docs/tools/nccom-test.md.
//
// Exit status: 0 success; 1 a rank failed, the run exceeded its bound,
// --check found wrong elements, or stdout took no results; 2 a usage error,
// or ranks placed on an emulated host libnccom's topology does not describe
// (one line on stderr, before any rank starts).
#include "bench.h"
#include "launch_env.h"
#include "local_launcher.h"
#include "options.h"
#include "shape_check.h"
#include "topo_tool.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

// A standard descriptor the caller closed is put on /dev/null: otherwise the
// next socket or file this process opens takes its number, and whatever is
// written to stdout or stderr lands in it. Returns whether stdout was closed.
bool reopen_closed_standard_fds() {
  bool stdout_closed = false;
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int null = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (null >= 0 && null != fd) {
      ::dup2(null, fd);
      ::close(null);
    }
    stdout_closed = stdout_closed || fd == 1;
  }
  return stdout_closed;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace nccom::nccomtest;
  const bool stdout_closed = reopen_closed_standard_fds();
  // stdout carries the tables or the JSON document only: libnccom's log
  // lines go to stderr (or NCCL_DEBUG_FILE) in this process and in the
  // ranks it starts, whatever the configuration says (log.stream).
  ::setenv(kDebugStreamVar, "stderr", 1);
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
  const EnvMap env = current_env();
  auto place = detect_placement(env, *opts);
  if (!place) {
    std::fprintf(stderr, "nccom-test: %s\n", place.error().message.c_str());
    return 2;
  }
  // Every emulated host must be one libnccom's topology describes: asked
  // here, before any rank starts, rather than by every rank of a host once
  // the communicator is half built.
  if (const std::vector<int> counts = known_host_counts(env, *place); !counts.empty()) {
    const bool local = place->launcher == Launcher::LocalParent;
    const auto refused =
        refuse_host_shapes(counts, local ? DeviceCount::OnePerRank : DeviceCount::Runtime,
                           nccom::topotool::tool_dir(argv[0]));
    if (refused) {
      const std::string shape =
          local ? "-r " + std::to_string(opts->ranks) +
                      (opts->nodes > 1 ? " -N " + std::to_string(opts->nodes) : "")
                : std::string(launcher_name(place->launcher)) + " with " +
                      std::to_string(place->size) + " ranks on " + std::to_string(place->hosts) +
                      (place->hosts == 1 ? " host" : " hosts");
      std::fprintf(stderr, "nccom-test: %s\n", refusal_text(*refused, shape).c_str());
      return 2;
    }
  }
  const bool writes_plot = place->launcher == Launcher::LocalParent || place->rank == 0;
  if (!opts->plot.empty() && writes_plot) {
    if (const std::string why = check_plot_path(opts->plot); !why.empty()) {
      std::fprintf(stderr, "nccom-test: %s\n", why.c_str());
      return 2;
    }
  }
  if (stdout_closed && writes_plot) {  // the launcher, or the rank that prints the tables
    std::fprintf(stderr, "nccom-test: stdout is closed: the results would go nowhere\n");
    return 1;
  }
  if (place->launcher == Launcher::LocalParent) return run_local(*opts, argv[0], args);
  const int rc = run_rank(*opts, *place);
  // Results nobody received are a failure (stdout closed, or its reader
  // gone while SIGPIPE is ignored), not a silent success.
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
    std::fprintf(stderr,
                 "nccom-test: rank %d: writing the results to stdout failed (its reader went "
                 "away?)\n",
                 place->rank);
    return 1;
  }
  return rc;
}
