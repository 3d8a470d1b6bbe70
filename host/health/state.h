// nccom::health — what this process knows about itself, for the health
// service: its communicators (hash, rank, size, state), per proxy stream how
// many executions started and completed and what a stalled one waits on, and
// the last asynchronous errors. Written through a rank's RankWatch (watch.h:
// by the communicator, and by the proxy scheduler, whose ProgressSink it is);
// read by the health thread as text (snapshot_text) that any process of the
// job can parse (snapshot.h).
//
// Thread-safety: every method may be called from any thread. The scheduler's
// per-tick updates touch only atomics of its own stream.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace nccom::health {

// The proxy streams of one communicator (proxy::kMaxStreams).
inline constexpr int kStreams = 4;
// The asynchronous errors kept per process (oldest dropped first).
inline constexpr std::size_t kMaxErrors = 32;

enum class CommState : int { kInit = 0, kRunning = 1, kFailed = 2 };
const char* comm_state_name(CommState s);

// A stalled stream's verdict, set by the health thread and read by the
// scheduler on its next tick: the stream fails with this text.
struct StallVerdict {
  bool set = false;
  std::string text;
};

// One proxy stream's progress, as its scheduler publishes it.
struct StreamProgress {
  std::atomic<uint64_t> started{0};    // executions (basic-block runs) begun
  std::atomic<uint64_t> completed{0};  // ... and completed
  std::atomic<bool> running{false};    // an execution is in progress now
  // The basic block the stream runs (or ran last; -1: none yet).
  std::atomic<int64_t> block{-1};
  // Monotonic ms of the last progress of the running execution.
  std::atomic<uint64_t> last_progress_ms{0};
  // Monotonic ms at which the current (or last) execution began.
  std::atomic<uint64_t> began_ms{0};
  // What the oldest stalled op waits on (-1: unknown), published once the
  // stall passed a second; cleared when the stream moves.
  std::atomic<int> waiting_peer{-1};
  std::atomic<int> waiting_channel{-1};
  // The two above (and `waiting_what`) are published for this stall; the
  // peer may still be -1 when the transport does not name one.
  std::atomic<bool> waiting_known{false};

  std::atomic<bool> has_verdict{false};  // `verdict` is set

  mutable std::mutex mu;     // guards the three below
  std::string waiting_what;  // the ops' own descriptions
  std::string waiting_in;    // where the wait sits (the transport's op_waiting_in)
  StallVerdict verdict;
};

// One rank of one communicator in this process.
class CommRecord {
 public:
  CommRecord(uint64_t hash, int rank, int nranks, std::vector<uint64_t> processes);

  uint64_t hash() const { return hash_; }
  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  // The process key of every rank (index: rank); empty while the
  // communicator is in init (its ranks' processes are not known yet).
  const std::vector<uint64_t>& processes() const { return processes_; }

  void set_state(CommState s) { state_.store(static_cast<int>(s)); }
  CommState state() const { return static_cast<CommState>(state_.load()); }

  StreamProgress& stream(int s) { return streams_[static_cast<std::size_t>(s)]; }
  const StreamProgress& stream(int s) const { return streams_[static_cast<std::size_t>(s)]; }

  // The health service found a member's process dead: a wait of this
  // communicator that needs every member (transport setup) gives up at
  // once, naming it, instead of at its timeout naming the peer it waits on.
  // The first one noted is kept; lost() is "" while none is.
  void note_lost(const std::string& why);
  std::string lost() const;

 private:
  uint64_t hash_;
  int rank_;
  int nranks_;
  std::vector<uint64_t> processes_;
  std::atomic<int> state_{static_cast<int>(CommState::kInit)};
  std::array<StreamProgress, kStreams> streams_;
  mutable std::mutex lost_mutex_;
  std::string lost_;  // guarded by lost_mutex_
};

struct ErrorRecord {
  uint64_t when_ms = 0;  // monotonic
  uint64_t comm = 0;     // 0: not tied to a communicator
  int rank = -1;
  std::string text;
};

// A peer process as this process's keep-alive links see it.
struct LinkView {
  uint64_t process = 0;
  std::string state;  // alive | unresponsive | dead | left
  uint64_t silent_ms = 0;
};

// The process-wide registry.
class Registry {
 public:
  static Registry& instance();

  std::shared_ptr<CommRecord> add_comm(uint64_t hash, int rank, int nranks,
                                       std::vector<uint64_t> processes);
  void remove_comm(const CommRecord* record);
  std::vector<std::shared_ptr<CommRecord>> comms() const;

  void record_error(uint64_t comm, int rank, std::string text);
  std::vector<ErrorRecord> errors() const;
  // The stall warnings this process logged, kept (as many as errors) so
  // that nccom-ras shows which ranks warned and why.
  void record_warning(uint64_t comm, int rank, std::string text);
  std::vector<ErrorRecord> warnings() const;

  // This process's view as snapshot text (format in snapshot.h), with the
  // links the health thread passes in.
  std::string snapshot_text(uint64_t process, int pid, const std::string& host,
                            const std::vector<LinkView>& links) const;

  // Forget every communicator, error and warning (tests, and a forked
  // child: what it inherited is its parent's).
  void clear();
  // fork(): held from before the fork until after it in both processes.
  void hold_for_fork() { mu_.lock(); }
  void release_after_fork() { mu_.unlock(); }

 private:
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<CommRecord>> comms_;
  std::deque<ErrorRecord> errors_;
  std::deque<ErrorRecord> warnings_;
};

// Monotonic milliseconds (steady clock), the health module's one time base.
uint64_t now_ms();

}  // namespace nccom::health
