// A process's health snapshot as text, and its parser. The text is what
// Registry::snapshot_text writes and what a query brings back from every
// process of the job:
//
//   nccom-health 1
//   process key=<16 hex> pid=<n> host=<name>
//   comm hash=<16 hex> rank=<r> nranks=<n> state=<init|running|failed>
//   stream comm=<hex> rank=<r> id=<s> started=<n> completed=<n> running=<0|1>
//          idle_ms=<n> peer=<r> channel=<c>                      (one line)
//   waiting comm=<hex> rank=<r> id=<s> text=<where the stream's wait sits>
//   link process=<hex> state=<alive|unresponsive|dead|left> silent_ms=<n>
//   error comm=<hex> rank=<r> age_ms=<n> text=<the rest of the line>
//   warning comm=<hex> rank=<r> age_ms=<n> text=<the rest of the line>
//   end
//
// Lines after "process" may repeat in any number, bounded by kMaxLines.
// Unknown line kinds and unknown keys are skipped (a newer peer may say more);
// a missing or malformed known field is an error naming the line.
#pragma once

#include <nccom/util/result.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nccom::health {

inline constexpr std::size_t kMaxLines = 4096;
inline constexpr std::size_t kMaxLineBytes = 1024;
// An error's or warning's text is cut to this; the rest of its line is keys.
inline constexpr std::size_t kMaxEventTextBytes = kMaxLineBytes - 120;

// Texts carry no control character: the writer replaces its own, the parser
// any a peer sent (a report must not drive an operator's terminal).
inline bool control_char(char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }

struct CommSnap {
  uint64_t hash = 0;
  int rank = -1;
  int nranks = 0;
  std::string state;
};
struct StreamSnap {
  uint64_t comm = 0;
  int rank = -1;
  int id = 0;
  uint64_t started = 0;
  uint64_t completed = 0;
  bool running = false;
  uint64_t idle_ms = 0;
  int peer = -1;
  int channel = -1;
  // Optional on the wire (a process that predates it does not send it):
  // the basic block the stream runs or ran last (-1: none or not said).
  int64_t block = -1;
  // Optional on the wire: how long before the snapshot the current (or
  // last) execution began, by the process's own clock. It lets a reader
  // order the non-simultaneous snapshots of two processes (health/report.cc).
  std::optional<uint64_t> began_ago_ms = std::nullopt;
  // From a "waiting" line after it (optional): where its wait sits, e.g.
  // "its oldest request (RECV) is in the net plugin X from FILE".
  std::string waiting_in{};
};
struct LinkSnap {
  uint64_t process = 0;
  std::string state;
  uint64_t silent_ms = 0;
};
struct ErrorSnap {
  uint64_t comm = 0;
  int rank = -1;
  uint64_t age_ms = 0;
  std::string text;
};

struct ProcessSnapshot {
  uint64_t process = 0;
  int pid = 0;
  std::string host;
  std::vector<CommSnap> comms;
  std::vector<StreamSnap> streams;
  std::vector<LinkSnap> links;
  std::vector<ErrorSnap> errors;
  std::vector<ErrorSnap> warnings;  // stall warnings logged
};

Result<ProcessSnapshot> parse_snapshot(std::string_view text);

}  // namespace nccom::health
