// One rank of nccom-test: joins the communicator through the reference
// runtime's collective API (nrt_emu_ccom_*), gathers every rank's placement
// with the engine (an all-gather of fixed-size records), runs every
// operation at every size out of place and in place, checks the results
// (--check), combines times and wrong counts across ranks with the engine
// itself (fp64 all-reduces: MAX of the times and their negatives, SUM of the
// times and wrong counts; with --stats, MAX of each iteration's time), and on
// rank 0 prints the report.
#pragma once

#include "launch_env.h"
#include "options.h"

#include <string>

namespace nccom::nccomtest {

// Exit status of a local rank that finished but found wrong elements (the
// local parent turns it into 1 without calling the rank failed).
inline constexpr int kExitCheckFailed = 3;

// --stats combines the per-iteration times in all-reduces of at most this
// many fp64 values (512 KiB of device memory), so -n 1000000 costs 16 calls
// per placement and no more device memory.
inline constexpr int kStatsChunk = 65536;
// The collective calls one row makes beyond its placements' own: the two
// combining all-reduces, and with --stats the per-iteration ones.
uint64_t combining_calls_per_row(const Options& o);
// The collective calls a run makes outside its rows: the placement
// all-gather.
inline constexpr uint64_t kCallsOutsideRows = 1;

// Runs this process as rank p.rank. Returns the exit status: 0, 1 (failure,
// reason on stderr; also wrong elements under a launcher) or kExitCheckFailed.
int run_rank(const Options& o, const Placement& p);

// Whether the plot file can be written (its directory exists and is
// writable); "" when fine, else the reason.
std::string check_plot_path(const std::string& path);

}  // namespace nccom::nccomtest
