// The local launch: nccom-test starts -r copies of itself (/proc/self/exe),
// rank i on emulated host i / (r/N) as local rank i % (r/N), rooted at a
// loopback port it found free; relays rank 0's output; if a rank fails or
// dies, stops the ranks it started (only those), names the failed rank and
// its reason, and exits 1. The whole run is bounded (run_bound_ms).
#pragma once

#include "options.h"

#include <cstdint>
#include <string>
#include <vector>

namespace nccom::nccomtest {

// Runs the ranks; `args` are the command-line arguments (without argv[0])
// every rank re-parses. Returns the process exit status (0, or 1).
int run_local(const Options& o, const std::string& argv0, const std::vector<std::string>& args);

// A TCP port on 127.0.0.1 that was free a moment ago (0 and *err on failure).
uint16_t find_free_port(std::string* err);

// The bound on a local run: --timeout-ms for each collective call the run
// makes (warmup, timed, checked and combining calls of every row, both
// placements), plus four for joining and closing. Capped at 7 days.
uint64_t run_bound_ms(const Options& o);

// "exited with status N" / "was killed by signal N (NAME)" for a wait status.
std::string describe_wait_status(int status);

}  // namespace nccom::nccomtest
