// The local launch: nccom-test starts -r copies of itself (/proc/self/exe),
// rank i on emulated host i / (r/N) as local rank i % (r/N), rooted at a
// loopback port it found free; relays rank 0's output; if a rank fails or
// dies, stops the ranks it started (only those), prints one summary line
// naming the rank whose own failure ended the run and its reason, and the
// ranks that failed because it left (summary_line), and exits 1. The whole
// run is bounded (run_bound_ms).
#pragma once

#include "failure_summary.h"
#include "options.h"

#include <cstdint>
#include <string>
#include <vector>

namespace nccom::nccomtest {

// Runs the ranks; `args` are the command-line arguments (without argv[0])
// every rank re-parses. Returns the process exit status (0, or 1).
int run_local(const Options& o, const std::string& argv0, const std::vector<std::string>& args);

// A TCP port on 127.0.0.1 held for the root: bound (SO_REUSEADDR, never
// listening) until the reservation is destroyed, so no other process is
// given it meanwhile, while rank 0's bootstrap root — which binds with
// SO_REUSEADDR and listens — still can. port() is 0 (and error() says why)
// when no port could be reserved.
class PortReservation {
 public:
  PortReservation();
  ~PortReservation();
  PortReservation(const PortReservation&) = delete;
  PortReservation& operator=(const PortReservation&) = delete;
  uint16_t port() const { return port_; }
  const std::string& error() const { return error_; }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
  std::string error_;
};

// The bound on a local run: --timeout-ms for each collective call the run
// makes (warmup, timed, checked and combining calls of every row, both
// placements, and the placement all-gather), plus four for joining and
// closing. Capped at 7 days.
uint64_t run_bound_ms(const Options& o);

// "exited with status N" / "was killed by signal N (SIGNAME)" for a wait status.
std::string describe_wait_status(int status);

}  // namespace nccom::nccomtest
