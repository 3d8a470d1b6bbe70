// nccom-test: collective benchmark and check through the reference runtime
// (the option names of Neuron's nccom-test and nccl-tests). Usage:
// docs/tools/nccom-test.md.
//
// Exit status: 0 success; 1 a rank failed, the run exceeded its bound,
// --check found wrong elements, or stdout took no results; 2 a usage error
// (one line on stderr).
#include "bench.h"
#include "launch_env.h"
#include "local_launcher.h"
#include "options.h"

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
  ::setenv("NCCOM_DEBUG_STREAM", "stderr", 1);
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
