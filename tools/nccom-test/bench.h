// One rank of nccom-test: joins the communicator through the reference
// runtime's collective API (nrt_emu_ccom_*), runs every operation at every
// size out of place and in place, checks the results (--check), combines
// times and wrong counts across ranks with the engine itself (an all-reduce
// of fp64 MAX and of int64 SUM), and on rank 0 prints the report.
#pragma once

#include "launch_env.h"
#include "options.h"

#include <string>

namespace nccom::nccomtest {

// Exit status of a local rank that finished but found wrong elements (the
// local parent turns it into 1 without calling the rank failed).
inline constexpr int kExitCheckFailed = 3;

// Runs this process as rank p.rank. Returns the exit status: 0, 1 (failure,
// reason on stderr; also wrong elements under a launcher) or kExitCheckFailed.
int run_rank(const Options& o, const Placement& p);

// Whether the plot file can be written (its directory exists and is
// writable); "" when fine, else the reason.
std::string check_plot_path(const std::string& path);

}  // namespace nccom::nccomtest
