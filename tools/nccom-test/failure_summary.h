// The one summary line of a failed local run, built from how each rank
// ended and what it said: which rank's own failure ended the run (a peer
// whose departure other ranks report), ranks grouped by cause, cause first,
// at most kSummaryLimit bytes. Pure text functions: tests give outcomes.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace nccom::nccomtest {

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
