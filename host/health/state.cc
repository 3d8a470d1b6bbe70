#include "health/state.h"

#include "health/snapshot.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>

namespace nccom::health {

const char* comm_state_name(CommState s) {
  switch (s) {
    case CommState::kInit: return "init";
    case CommState::kRunning: return "running";
    case CommState::kFailed: return "failed";
  }
  return "unknown";
}

uint64_t now_ms() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

CommRecord::CommRecord(uint64_t hash, int rank, int nranks, std::vector<uint64_t> processes)
    : hash_(hash), rank_(rank), nranks_(nranks), processes_(std::move(processes)) {}

void CommRecord::note_lost(const std::string& why) {
  std::lock_guard lock(lost_mutex_);
  if (lost_.empty()) lost_ = why;
}

std::string CommRecord::lost() const {
  std::lock_guard lock(lost_mutex_);
  return lost_;
}

Registry& Registry::instance() {
  static Registry registry;
  return registry;
}

std::shared_ptr<CommRecord> Registry::add_comm(uint64_t hash, int rank, int nranks,
                                               std::vector<uint64_t> processes) {
  auto record = std::make_shared<CommRecord>(hash, rank, nranks, std::move(processes));
  std::lock_guard lock(mu_);
  comms_.push_back(record);
  return record;
}

void Registry::remove_comm(const CommRecord* record) {
  std::lock_guard lock(mu_);
  comms_.erase(std::remove_if(comms_.begin(), comms_.end(),
                              [record](const auto& c) { return c.get() == record; }),
               comms_.end());
}

std::vector<std::shared_ptr<CommRecord>> Registry::comms() const {
  std::lock_guard lock(mu_);
  return comms_;
}

namespace {

// One line of text (a newline would end the record early) without control
// characters.
void keep(std::deque<ErrorRecord>& where, uint64_t comm, int rank, std::string text) {
  std::replace_if(text.begin(), text.end(), control_char, ' ');
  if (where.size() == kMaxErrors) where.pop_front();
  where.push_back(ErrorRecord{now_ms(), comm, rank, std::move(text)});
}

}  // namespace

void Registry::record_error(uint64_t comm, int rank, std::string text) {
  std::lock_guard lock(mu_);
  keep(errors_, comm, rank, std::move(text));
}

std::vector<ErrorRecord> Registry::errors() const {
  std::lock_guard lock(mu_);
  return {errors_.begin(), errors_.end()};
}

void Registry::record_warning(uint64_t comm, int rank, std::string text) {
  std::lock_guard lock(mu_);
  keep(warnings_, comm, rank, std::move(text));
}

std::vector<ErrorRecord> Registry::warnings() const {
  std::lock_guard lock(mu_);
  return {warnings_.begin(), warnings_.end()};
}

void Registry::clear() {
  std::lock_guard lock(mu_);
  comms_.clear();
  errors_.clear();
  warnings_.clear();
}

namespace {

std::string line(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string line(const char* format, ...) {
  char buf[kMaxLineBytes];  // what the parser accepts
  va_list args;
  va_start(args, format);
  const int n = std::vsnprintf(buf, sizeof buf, format, args);
  va_end(args);
  if (n < 0) return {};
  return std::string(buf, static_cast<std::size_t>(std::min<int>(n, sizeof buf - 1))) + "\n";
}

// A word without white space or control characters (host names never have
// any; be safe).
std::string word(std::string text) {
  for (char& c : text) {
    if (c == ' ' || control_char(c)) c = '_';
  }
  return text.empty() ? "?" : text;
}

}  // namespace

std::string Registry::snapshot_text(uint64_t process, int pid, const std::string& host,
                                    const std::vector<LinkView>& links) const {
  const uint64_t now = now_ms();
  std::string out = "nccom-health 1\n";
  out += line("process key=%016" PRIx64 " pid=%d host=%s", process, pid, word(host).c_str());
  for (const auto& c : comms()) {
    out += line("comm hash=%016" PRIx64 " rank=%d nranks=%d state=%s", c->hash(), c->rank(),
                c->nranks(), comm_state_name(c->state()));
    for (int s = 0; s < kStreams; ++s) {
      const StreamProgress& p = c->stream(s);
      const uint64_t started = p.started.load();
      if (started == 0) continue;
      const bool running = p.running.load();
      const uint64_t last = p.last_progress_ms.load();
      const uint64_t idle = running && now > last ? now - last : 0;
      const uint64_t began = p.began_ms.load();
      out += line("stream comm=%016" PRIx64 " rank=%d id=%d started=%" PRIu64 " completed=%" PRIu64
                  " running=%d idle_ms=%" PRIu64 " peer=%d channel=%d block=%" PRId64
                  " began_ago_ms=%" PRIu64,
                  c->hash(), c->rank(), s, started, p.completed.load(), running ? 1 : 0, idle,
                  running ? p.waiting_peer.load() : -1, running ? p.waiting_channel.load() : -1,
                  p.block.load(), now > began ? now - began : 0);
      if (running && p.waiting_known.load(std::memory_order_acquire)) {
        std::string in;
        {
          std::lock_guard lock(p.mu);
          in = p.waiting_in.substr(0, kMaxEventTextBytes);
        }
        std::replace_if(in.begin(), in.end(), control_char, ' ');
        if (!in.empty()) {
          out += line("waiting comm=%016" PRIx64 " rank=%d id=%d text=%s", c->hash(), c->rank(), s,
                      in.c_str());
        }
      }
    }
  }
  for (const LinkView& l : links) {
    out += line("link process=%016" PRIx64 " state=%s silent_ms=%" PRIu64, l.process,
                l.state.c_str(), l.silent_ms);
  }
  auto events = [&](const char* kind, const std::vector<ErrorRecord>& list) {
    for (const ErrorRecord& e : list) {
      std::string text = e.text.substr(0, kMaxEventTextBytes);
      out += line("%s comm=%016" PRIx64 " rank=%d age_ms=%" PRIu64 " text=%s", kind, e.comm, e.rank,
                  now > e.when_ms ? now - e.when_ms : 0, text.c_str());
    }
  };
  events("error", errors());
  events("warning", warnings());
  out += "end\n";
  return out;
}

}  // namespace nccom::health
