// The job's health as one process assembles it from every process's answer:
// who answered, who did not and why, the communicators and their ranks, who
// is behind, who waits on whom, the asynchronous errors. Rendered as text for
// people or JSON for scripts (docs/health.md shows both).
#pragma once

#include "health/snapshot.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nccom::health {

// In the order a report lists the processes that do not answer.
enum class Reach {
  kAnswered,      // its snapshot came back
  kUnresponsive,  // connected (or connecting) but no answer in time
  kDead,          // its process is gone: connection refused or reset
  kLeft,          // it said goodbye (its communicators were freed)
};
const char* reach_name(Reach r);

struct Member {
  uint64_t process = 0;
  int pid = 0;
  std::string host;
  std::string endpoint;  // where its health service listens ("127.0.0.1:40123")
  Reach reach = Reach::kAnswered;
  std::string why;  // for a process that did not answer: what happened
  std::optional<ProcessSnapshot> snapshot;
  // When, by the collecting process's clock (monotonic ms), it was asked
  // and when its answer came: its snapshot was taken in between. 0: not
  // known (the report then takes the snapshots as simultaneous).
  uint64_t asked_ms = 0;
  uint64_t answered_ms = 0;
  // When the collecting process's own links found it dead (monotonic ms;
  // 0: they did not, the question did).
  uint64_t dead_since_ms = 0;
};

// A communicator as the answering process knows it: its members by rank.
struct CommMembers {
  uint64_t hash = 0;
  std::vector<uint64_t> processes;  // index: rank
};

struct JobView {
  std::vector<Member> members;
  std::vector<CommMembers> comms;
  uint64_t answered_by = 0;  // process key
  uint64_t elapsed_ms = 0;   // how long the collection took
  uint64_t timeout_ms = 0;   // the collection's bound
  uint64_t stuck_ms = 1000;  // a running stream idle this long is "waiting"
};

// The missing ranks of a communicator in init named in a report.
inline constexpr std::size_t kListedMissing = 32;

// The findings, in the order the renderers print them.
struct RankStatus {
  uint64_t comm = 0;
  int rank = -1;
  const Member* member = nullptr;  // nullptr: the rank's process is unknown
  // init | running | failed | unresponsive | dead | left | freed | unknown,
  // or missing: a rank of a communicator in init that no answering process holds.
  std::string state;
};
struct Behind {
  uint64_t comm = 0;
  int stream = 0;
  int rank = -1;
  uint64_t started = 0, completed = 0;
  uint64_t peers_started = 0;  // the most any rank began
  bool running = false;
  int64_t block = -1;  // the basic block it runs or ran last (-1: not said)
};
struct Wait {
  uint64_t comm = 0;
  int stream = 0;
  int rank = -1;
  int peer = -1;
  int channel = -1;
  uint64_t idle_ms = 0;
  int64_t block = -1;  // the basic block it runs (-1: not said)
  std::string in{};    // where the wait sits ("": not said)
};
struct ErrorSeen {
  const Member* member = nullptr;
  ErrorSnap error;
};
struct CommSummary {
  uint64_t hash = 0;
  int nranks = 0;
  // Every rank, by rank; for a communicator in init only the ranks that
  // listed themselves, by rank, and the others counted as missing (the
  // first kListedMissing of them named): its size is a peer's claim, and
  // nothing is allocated per rank it claims.
  std::vector<RankStatus> ranks;
  int missing = 0;
  std::vector<int> missing_listed;
  uint64_t min_completed = 0, max_completed = 0;  // over answered ranks, stream 0..3
};

struct Analysis {
  std::vector<CommSummary> comms;
  std::vector<const Member*> not_answering;
  std::vector<Behind> behind;
  std::vector<Wait> waits;
  std::vector<ErrorSeen> errors;
  std::vector<ErrorSeen> warnings;
  int hosts = 0;
};

// Combines the answers. Pointers refer into `job`, which must outlive it.
Analysis analyse(const JobView& job);

std::string render_text(const JobView& job, bool verbose);
std::string render_json(const JobView& job);

// "00000000c0ffee42": communicator hashes and process keys as messages show them.
std::string hex(uint64_t v);
// "5.3 s": milliseconds as messages show them.
std::string seconds(uint64_t ms);

// "rank 5 (host b, pid 4242)" for messages; the member may be null.
std::string who(int rank, const Member* member);

}  // namespace nccom::health
