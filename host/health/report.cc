#include "health/report.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <set>

namespace nccom::health {
std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

std::string seconds(uint64_t ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(ms) / 1000.0);
  return buf;
}

namespace {

const Member* find_member(const JobView& job, uint64_t process) {
  for (const Member& m : job.members) {
    if (m.process == process) return &m;
  }
  return nullptr;
}

const CommSnap* comm_line(const Member& m, uint64_t comm, int rank) {
  if (!m.snapshot) return nullptr;
  for (const CommSnap& c : m.snapshot->comms) {
    if (c.hash == comm && c.rank == rank) return &c;
  }
  return nullptr;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

// What a member is, in one word, after hearing what its neighbours saw.
std::string member_state(const Member& m) { return reach_name(m.reach); }

// Snapshots of different processes are not taken at one instant: a rank
// asked first can look behind a rank asked later that has since moved on.
// `peer` began its current execution at or before `seen`'s snapshot when
// its begin, pushed as late as the window allows (answered, less how long
// ago it began), is still no later than the earliest moment `seen` can have
// been read (asked). Only then is a lower count a rank that is behind and not
// the order of the answers. All three figures are whole milliseconds, each
// up to 1 ms short: 2 ms of margin keep the test sound. Without the times (an
// older peer), the counts are compared as they are.
bool began_before_seen(const StreamSnap& peer, const Member& peer_member, const Member& seen) {
  if (!peer.began_ago_ms || peer_member.answered_ms == 0 || seen.asked_ms == 0) return true;
  return seen.asked_ms + *peer.began_ago_ms >= peer_member.answered_ms + 2;
}

}  // namespace

const char* reach_name(Reach r) {
  switch (r) {
    case Reach::kAnswered: return "alive";
    case Reach::kUnresponsive: return "unresponsive";
    case Reach::kDead: return "dead";
    case Reach::kLeft: return "left";
  }
  return "unknown";
}

std::string who(int rank, const Member* member) {
  std::string text = "rank " + std::to_string(rank);
  if (member != nullptr) {
    text += " (host " + member->host + ", pid " + std::to_string(member->pid) + ")";
  }
  return text;
}

namespace {

// Hosts, the processes that do not answer, and every error and warning.
void members(const JobView& job, Analysis& a) {
  std::set<std::string> hosts;
  for (const Member& m : job.members) {
    hosts.insert(m.host);
    if (m.reach != Reach::kAnswered) a.not_answering.push_back(&m);
    if (m.snapshot) {
      for (const ErrorSnap& e : m.snapshot->errors) a.errors.push_back(ErrorSeen{&m, e});
      for (const ErrorSnap& e : m.snapshot->warnings) a.warnings.push_back(ErrorSeen{&m, e});
    }
  }
  a.hosts = static_cast<int>(hosts.size());
  // A process that does not answer now (stopped, swapping, wedged) is the
  // one an operator can still act on and most often what the others wait
  // for; the dead follow, then those that left cleanly. Among the dead, the
  // first the links found gone come first: a job's failing ranks exit after
  // the one that caused it, and are found dead later or only by the
  // question itself. Otherwise, the members' order.
  const auto found = [](const Member* m) {
    return m->dead_since_ms != 0 ? m->dead_since_ms : UINT64_MAX;
  };
  std::stable_sort(a.not_answering.begin(), a.not_answering.end(),
                   [&](const Member* x, const Member* y) {
                     if (x->reach != y->reach) return x->reach < y->reach;
                     return x->reach == Reach::kDead && found(x) < found(y);
                   });
}

// Rank `r` of a communicator the answering process has a table for.
RankStatus rank_of(const JobView& job, const CommMembers& c, int r) {
  RankStatus rs;
  rs.comm = c.hash;
  rs.rank = r;
  rs.member = find_member(job, c.processes[static_cast<std::size_t>(r)]);
  if (rs.member == nullptr) {
    rs.state = "unknown";
  } else if (rs.member->reach != Reach::kAnswered) {
    rs.state = member_state(*rs.member);
  } else if (const CommSnap* line = comm_line(*rs.member, c.hash, r)) {
    rs.state = line->state;
  } else {
    rs.state = "freed";  // the process answered but no longer has this rank
  }
  return rs;
}

// Per stream id, one entry per answered rank, with the process that said it.
using StreamsById = std::map<int, std::vector<std::pair<StreamSnap, const Member*>>>;

// The ranks of one stream that began fewer executions than a peer did
// before they were asked.
void behind_in(uint64_t comm, int id, const StreamsById::mapped_type& list, Analysis& a) {
  for (const auto& [st, member] : list) {
    uint64_t most = 0;
    for (const auto& [peer, peer_member] : list) {
      if (peer.started > st.started && began_before_seen(peer, *peer_member, *member))
        most = std::max(most, peer.started);
    }
    if (most > st.started) {
      a.behind.push_back(
          Behind{comm, id, st.rank, st.started, st.completed, most, st.running, st.block});
    }
  }
}

// A communicator the answering process has a table for: every rank's
// state, its streams' progress, who waits and who is behind.
CommSummary tabled(const JobView& job, const CommMembers& c, Analysis& a) {
  CommSummary s;
  s.hash = c.hash;
  s.nranks = static_cast<int>(c.processes.size());
  bool first = true;
  StreamsById streams;
  for (int r = 0; r < s.nranks; ++r) {
    const RankStatus rs = rank_of(job, c, r);
    if (rs.member != nullptr && rs.member->snapshot) {
      for (const StreamSnap& st : rs.member->snapshot->streams) {
        if (st.comm != c.hash || st.rank != r) continue;
        streams[st.id].emplace_back(st, rs.member);
        s.min_completed = first ? st.completed : std::min(s.min_completed, st.completed);
        s.max_completed = first ? st.completed : std::max(s.max_completed, st.completed);
        first = false;
        if (st.running && st.idle_ms >= job.stuck_ms && st.peer >= 0) {
          a.waits.push_back(
              Wait{c.hash, st.id, r, st.peer, st.channel, st.idle_ms, st.block, st.waiting_in});
        }
      }
    }
    s.ranks.push_back(rs);
  }
  for (const auto& [id, list] : streams) behind_in(c.hash, id, list, a);
  return s;
}

// Communicators the answering process has no table for: still in init
// somewhere (a rank lists itself before it knows the others). Their ranks
// are the ones that say so; a rank nobody reports is missing: it has not
// called init, or its process is not in the mesh.
void untabled(const JobView& job, Analysis& a) {
  std::map<uint64_t, std::vector<std::pair<const Member*, const CommSnap*>>> lines_of;
  for (const Member& m : job.members) {
    if (!m.snapshot) continue;
    for (const CommSnap& c : m.snapshot->comms) {
      bool known = false;
      for (const CommMembers& table : job.comms) known = known || table.hash == c.hash;
      if (!known) lines_of[c.hash].push_back({&m, &c});
    }
  }
  for (const auto& [hash, lines] : lines_of) {
    CommSummary s;
    s.hash = hash;
    s.nranks = lines.front().second->nranks;
    std::map<int, RankStatus> seen;
    for (const auto& [member, line] : lines) {
      if (line->rank >= s.nranks) continue;  // disagrees on the size: the first line decides
      seen.emplace(line->rank, RankStatus{hash, line->rank, member, line->state});
    }
    int next = 0;  // the lowest rank not yet accounted for
    auto count_gap = [&s](int from, int to) {
      for (int r = from; r < to && s.missing_listed.size() < kListedMissing; ++r)
        s.missing_listed.push_back(r);
      s.missing += to - from;
    };
    for (auto& [rank, status] : seen) {
      count_gap(next, rank);
      next = rank + 1;
      s.ranks.push_back(std::move(status));
    }
    count_gap(next, s.nranks);
    a.comms.push_back(std::move(s));
  }
}

}  // namespace

Analysis analyse(const JobView& job) {
  Analysis a;
  members(job, a);
  // Communicators: the answering process's tables name every rank's process.
  for (const CommMembers& c : job.comms) a.comms.push_back(tabled(job, c, a));
  untabled(job, a);
  return a;
}

namespace {

const RankStatus* rank_status(const Analysis& a, uint64_t comm, int rank) {
  for (const CommSummary& c : a.comms) {
    if (c.hash != comm) continue;
    for (const RankStatus& r : c.ranks) {
      if (r.rank == rank) return &r;
    }
  }
  return nullptr;
}

const Member* rank_member(const Analysis& a, uint64_t comm, int rank) {
  const RankStatus* r = rank_status(a, comm, rank);
  return r != nullptr ? r->member : nullptr;
}

std::string rank_state(const Analysis& a, uint64_t comm, int rank) {
  const RankStatus* r = rank_status(a, comm, rank);
  return r != nullptr ? r->state : "unknown";
}

// " (basic block 3)", or nothing when the process did not say.
std::string block_words(int64_t block) {
  return block < 0 ? std::string() : " (basic block " + std::to_string(block) + ")";
}

std::string ranks_of(const JobView& job, const Member& m) {
  std::string text;
  for (const CommMembers& c : job.comms) {
    for (std::size_t r = 0; r < c.processes.size(); ++r) {
      if (c.processes[r] != m.process) continue;
      text += text.empty() ? "" : ", ";
      text += "rank " + std::to_string(r) + " of comm " + hex(c.hash);
    }
  }
  return text.empty() ? "no rank known" : text;
}

}  // namespace

namespace {

// A section's title line: "\nTitle: N" ("none" for 0).
std::string title(const char* name, std::size_t n) {
  return std::string("\n") + name + ": " + (n == 0 ? std::string("none") : std::to_string(n)) +
         "\n";
}

std::string text_hosts(const JobView& job, const Analysis& a) {
  const Member* me = find_member(job, job.answered_by);
  std::string out =
      "nccom health: " + std::to_string(job.members.size()) + " processes on " +
      std::to_string(a.hosts) + " host" + (a.hosts == 1 ? "" : "s") + ", answered by " +
      (me != nullptr ? "pid " + std::to_string(me->pid) + " on host " + me->host : "?") + " in " +
      std::to_string(job.elapsed_ms) + " ms\n";
  std::map<std::string, std::vector<const Member*>> by_host;
  for (const Member& m : job.members) by_host[m.host].push_back(&m);
  out += "\nHosts\n";
  for (const auto& [host, list] : by_host) {
    std::string pids;
    for (const Member* m : list) {
      pids += pids.empty() ? "" : " ";
      pids += std::to_string(m->pid);
      if (m->reach != Reach::kAnswered) pids += std::string("(") + reach_name(m->reach) + ")";
    }
    out += "  " + host + ": " + std::to_string(list.size()) + " process" +
           (list.size() == 1 ? "" : "es") + ", pids " + pids + "\n";
  }
  return out;
}

std::string text_not_answering(const JobView& job, const Analysis& a) {
  std::string out = title("Processes not answering", a.not_answering.size());
  for (const Member* m : a.not_answering) {
    std::string upper = reach_name(m->reach);
    for (char& ch : upper) ch = static_cast<char>(ch - ('a' - 'A'));
    out += "  " + upper + ": pid " + std::to_string(m->pid) + " on host " + m->host + " (" +
           ranks_of(job, *m) + "): " + m->why + "\n";
  }
  return out;
}

std::string text_comm(const CommSummary& c, bool verbose) {
  std::map<std::string, int> counts;
  for (const RankStatus& r : c.ranks) ++counts[r.state];
  if (c.missing != 0) counts["missing"] = c.missing;
  std::string states;
  for (const auto& [state, n] : counts) {
    states += states.empty() ? "" : ", ";
    states += std::to_string(n) + " " + state;
  }
  std::string out =
      "  comm " + hex(c.hash) + ": " + std::to_string(c.nranks) + " ranks: " + states +
      "; proxy executions completed " + std::to_string(c.min_completed) +
      (c.min_completed == c.max_completed ? "" : ".." + std::to_string(c.max_completed)) + "\n";
  if (verbose) {
    for (const RankStatus& r : c.ranks)
      out += "    " + who(r.rank, r.member) + ": " + r.state + "\n";
  }
  if (c.missing != 0) {
    std::string listed;
    for (const int r : c.missing_listed) listed += (listed.empty() ? "" : ", ") + std::to_string(r);
    const auto more = static_cast<std::size_t>(c.missing) - c.missing_listed.size();
    if (more != 0) listed += " and " + std::to_string(more) + " more";
    out += "    missing: rank" + std::string(c.missing == 1 ? " " : "s ") + listed +
           " (no process that answered holds them: they have not called init, or their "
           "process is not in the job's mesh)\n";
  }
  return out;
}

std::string text_progress(const Analysis& a) {
  std::string out = title("Behind", a.behind.size());
  for (const Behind& b : a.behind) {
    out += "  " + who(b.rank, rank_member(a, b.comm, b.rank)) + " of comm " + hex(b.comm) +
           ", stream " + std::to_string(b.stream) + block_words(b.block) + ": began " +
           std::to_string(b.started) + " executions, its peers up to " +
           std::to_string(b.peers_started) + (b.running ? "" : " (not running one now)") + "\n";
  }
  out += title("Waiting", a.waits.size());
  for (const Wait& w : a.waits) {
    out += "  " + who(w.rank, rank_member(a, w.comm, w.rank)) + " of comm " + hex(w.comm) +
           ", stream " + std::to_string(w.stream) + block_words(w.block) + ", waits on " +
           who(w.peer, rank_member(a, w.comm, w.peer)) + " [" + rank_state(a, w.comm, w.peer) +
           "], channel " + std::to_string(w.channel) + ", for " + seconds(w.idle_ms) +
           (w.in.empty() ? "" : "; " + w.in) + "\n";
  }
  return out;
}

std::string text_events(const char* name, const std::vector<ErrorSeen>& list) {
  std::string out = title(name, list.size());
  for (const ErrorSeen& e : list) {
    out += "  " + who(e.error.rank, e.member) + ", " + seconds(e.error.age_ms) +
           " ago: " + e.error.text + "\n";
  }
  return out;
}

}  // namespace

std::string render_text(const JobView& job, bool verbose) {
  const Analysis a = analyse(job);
  std::string out = text_hosts(job, a) + text_not_answering(job, a);
  out += "\nCommunicators: " + std::to_string(a.comms.size()) + "\n";
  for (const CommSummary& c : a.comms) out += text_comm(c, verbose);
  return out + text_progress(a) + text_events("Stall warnings", a.warnings) +
         text_events("Errors", a.errors);
}

std::string render_json(const JobView& job) {
  const Analysis a = analyse(job);
  auto member_json = [](const Member* m) {
    if (m == nullptr) return std::string("null");
    return "{\"host\":" + json_string(m->host) + ",\"pid\":" + std::to_string(m->pid) +
           ",\"process\":\"" + hex(m->process) + "\",\"endpoint\":" + json_string(m->endpoint) +
           ",\"state\":\"" + reach_name(m->reach) + "\"" +
           (m->reach == Reach::kAnswered ? "" : ",\"why\":" + json_string(m->why)) + "}";
  };
  std::string out = "{\"version\":1,\"answered_by\":\"" + hex(job.answered_by) +
                    "\",\"elapsed_ms\":" + std::to_string(job.elapsed_ms) +
                    ",\"timeout_ms\":" + std::to_string(job.timeout_ms) +
                    ",\"hosts\":" + std::to_string(a.hosts) + ",\"processes\":[";
  for (std::size_t i = 0; i < job.members.size(); ++i) {
    out += (i != 0 ? "," : "") + member_json(&job.members[i]);
  }
  out += "],\"communicators\":[";
  for (std::size_t i = 0; i < a.comms.size(); ++i) {
    const CommSummary& c = a.comms[i];
    out += (i != 0 ? "," : "") + std::string("{\"hash\":\"") + hex(c.hash) +
           "\",\"nranks\":" + std::to_string(c.nranks) +
           ",\"completed_min\":" + std::to_string(c.min_completed) +
           ",\"completed_max\":" + std::to_string(c.max_completed) + ",\"ranks\":[";
    for (std::size_t r = 0; r < c.ranks.size(); ++r) {
      out += (r != 0 ? "," : "") + std::string("{\"rank\":") + std::to_string(c.ranks[r].rank) +
             ",\"state\":" + json_string(c.ranks[r].state) +
             ",\"process\":" + member_json(c.ranks[r].member) + "}";
    }
    out += "],\"missing\":" + std::to_string(c.missing) + ",\"missing_ranks\":[";
    for (std::size_t r = 0; r < c.missing_listed.size(); ++r) {
      out += (r != 0 ? "," : "") + std::to_string(c.missing_listed[r]);
    }
    out += "]}";
  }
  out += "],\"behind\":[";
  for (std::size_t i = 0; i < a.behind.size(); ++i) {
    const Behind& b = a.behind[i];
    out += (i != 0 ? "," : "") + std::string("{\"comm\":\"") + hex(b.comm) +
           "\",\"stream\":" + std::to_string(b.stream) + ",\"rank\":" + std::to_string(b.rank) +
           ",\"started\":" + std::to_string(b.started) +
           ",\"completed\":" + std::to_string(b.completed) +
           ",\"peers_started\":" + std::to_string(b.peers_started) +
           ",\"running\":" + (b.running ? "true" : "false") +
           ",\"block\":" + std::to_string(b.block) + "}";
  }
  out += "],\"waiting\":[";
  for (std::size_t i = 0; i < a.waits.size(); ++i) {
    const Wait& w = a.waits[i];
    out += (i != 0 ? "," : "") + std::string("{\"comm\":\"") + hex(w.comm) +
           "\",\"stream\":" + std::to_string(w.stream) + ",\"rank\":" + std::to_string(w.rank) +
           ",\"peer\":" + std::to_string(w.peer) +
           ",\"peer_state\":" + json_string(rank_state(a, w.comm, w.peer)) +
           ",\"channel\":" + std::to_string(w.channel) +
           ",\"idle_ms\":" + std::to_string(w.idle_ms) + ",\"block\":" + std::to_string(w.block) +
           (w.in.empty() ? "" : ",\"in\":" + json_string(w.in)) + "}";
  }
  auto events = [&](const char* key, const std::vector<ErrorSeen>& list) {
    out += std::string("],\"") + key + "\":[";
    for (std::size_t i = 0; i < list.size(); ++i) {
      const ErrorSeen& e = list[i];
      out += (i != 0 ? "," : "") + std::string("{\"comm\":\"") + hex(e.error.comm) +
             "\",\"rank\":" + std::to_string(e.error.rank) +
             ",\"age_ms\":" + std::to_string(e.error.age_ms) +
             ",\"process\":" + member_json(e.member) + ",\"text\":" + json_string(e.error.text) +
             "}";
    }
  };
  events("stall_warnings", a.warnings);
  events("errors", a.errors);
  out += "]}\n";
  return out;
}

}  // namespace nccom::health
