// The local launch: nccom-test starts -r copies of itself (/proc/self/exe),
// rank i on emulated host i / (r/N) as local rank i % (r/N), rooted at a
// loopback port it found free; relays rank 0's output; if a rank fails or
// dies, stops the ranks it started (only those), prints one summary line
// naming the rank whose own failure ended the run and its reason, and the
// ranks that failed because it left (summary_line), and exits 1. The whole
// run is bounded (run_bound_ms).
#pragma once

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

// The rank whose departure a failed rank's reason gives as its cause, or
// -1: the reason says a peer left (its connection closed, nothing listens
// at its port any more, its process is gone) and names that peer's rank,
// other than `self`. What a rank adds from the health service is not read.
int departed_peer(const std::string& reason, int self);

// The failure summary's longest line, in bytes.
inline constexpr size_t kSummaryLimit = 200;

// How one rank of a local run ended, as the failure summary reads it.
struct RankEnd {
  int rank = 0;
  int host = 0;
  std::string end;       // describe_wait_status, or how the launcher's stop found it
  std::string said;      // its closing line without "nccom-test: rank R: " ("" for none)
  bool failed = false;   // it failed by itself (not clean, not wrong results only, not
                         // merely stopped by the launcher)
  bool stopped = false;  // the launcher stopped it before it failed
  int left_for = -1;     // the peer whose departure its line reports (departed_peer)
};

// A rank's closing line "CAUSE (CONTEXT)[; the health service says: …]" as
// nccom-test's ranks write it: CAUSE, and CONTEXT ("" when the line has no
// parenthesised context at its end).
struct RankReason {
  std::string cause;
  std::string context;
};
RankReason split_reason(const std::string& said);

// What a rank was doing, from its CONTEXT: up to the first ": ", without a
// trailing parenthesis or " at …" ("joining the communicator at
// 127.0.0.1:5 (from the local parent): …" is "joining the communicator").
std::string phase_of(const std::string& context);

// Rank numbers as ranges: "0-2, 4, 6-7".
std::string rank_ranges(std::vector<int> ranks);

// `text` cut to at most `limit` bytes, ending with "…" when cut (never
// inside a UTF-8 character).
std::string ellipsize(const std::string& text, size_t limit);

// The one summary line of a failed run (at most `limit` bytes), cause
// first: the rank whose own failure ended the run (`culprit`, an index into
// `ranks`) with its cause and what it was doing, the ranks that failed with
// the same cause grouped with it; then the ranks that failed because it
// (or a rank that failed because of it) left; the ranks that failed with
// causes of their own; the ranks the launcher stopped. A cause is shortened
// with "…" when the line must be (each rank's own line above it is whole).
std::string summary_line(const std::vector<RankEnd>& ranks, size_t culprit,
                         size_t limit = kSummaryLimit);

}  // namespace nccom::nccomtest
