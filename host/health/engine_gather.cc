// The engine's queries: collections of snapshots for a client's STATUS or
// a stall probe, the job view, and the stall watchdog (engine.h).
#include "health/engine.h"
#include "log/log.h"

#include <algorithm>

namespace nccom::health::engine {

int Engine::start_collection(Collection col, const std::vector<uint64_t>& targets) {
  const uint64_t now = now_ms();
  const int cid = next_collection_++;
  uint64_t timeout = settings_.query_timeout_ms;
  if (col.purpose == Collection::Purpose::kStatus) {
    auto c = conns_.find(col.client);
    if (c != conns_.end()) timeout = c->second.timeout_ms;
  }
  col.started = now;
  col.deadline = now + timeout;
  Member self;
  self.process = card_.process;
  self.pid = static_cast<int>(card_.pid);
  self.host = card_.host;
  self.endpoint = card_.endpoint.to_string();
  self.snapshot = own_snapshot();
  self.asked_ms = self.answered_ms = now;
  col.members[card_.process] = self;
  collections_[cid] = std::move(col);
  for (uint64_t key : targets) {
    auto p = peers_.find(key);
    if (p == peers_.end()) continue;
    Member m;
    m.process = key;
    m.pid = static_cast<int>(p->second.card.pid);
    m.host = p->second.card.host;
    m.endpoint = p->second.card.endpoint.to_string();
    if (p->second.state == Reach::kLeft) {
      m.reach = Reach::kLeft;
      m.why = "it freed its communicators " + seconds(now - p->second.since) + " ago";
      collections_[cid].members[key] = m;
      continue;
    }
    m.reach = Reach::kUnresponsive;
    m.why = "no answer";
    m.asked_ms = now;
    collections_[cid].members[key] = m;
    bool in_progress = false;
    auto s = start_connect(p->second.card.endpoint, in_progress);
    if (!s) {
      const bool refused = s.error().status == NRT_COLL_PENDING;
      collections_[cid].members[key].reach = refused ? Reach::kDead : Reach::kUnresponsive;
      collections_[cid].members[key].why = refused ? "connection refused: its process is gone"
                                                   : "cannot connect: " + s.error().message;
      continue;
    }
    Conn c = outbound(Kind::kQueryOut, std::move(*s), in_progress, key, p->second, Purpose::kQuery);
    c.collection = cid;
    c.deadline = now + timeout;
    queue(c, frame(FrameType::kQuery));
    add_conn(std::move(c));
    ++collections_[cid].pending;
  }
  if (collections_[cid].pending == 0) finish_collection(cid);
  return cid;
}

void Engine::member_done(int col, uint64_t key, Reach reach, const std::string& why,
                         std::optional<ProcessSnapshot> snap) {
  auto it = collections_.find(col);
  if (it == collections_.end()) return;
  Member& m = it->second.members[key];
  m.reach = reach;
  m.why = why;
  m.snapshot = std::move(snap);
  m.answered_ms = now_ms();
  if (--it->second.pending <= 0) finish_collection(col);
}

ProcessSnapshot Engine::own_snapshot() const {
  const std::string text = Registry::instance().snapshot_text(
      card_.process, static_cast<int>(card_.pid), card_.host, link_views(now_ms()));
  auto snap = parse_snapshot(text);
  return snap ? std::move(*snap) : ProcessSnapshot{};
}

std::vector<LinkView> Engine::link_views(uint64_t now) const {
  std::vector<LinkView> out;
  for (const auto& [key, p] : peers_) {
    if (!p.watched && p.state == Reach::kAnswered) continue;
    out.push_back(LinkView{key, reach_name(p.state), p.last_heard != 0 ? now - p.last_heard : 0});
  }
  return out;
}

JobView Engine::job_view(const Collection& col) const {
  JobView job;
  job.answered_by = card_.process;
  job.elapsed_ms = now_ms() - col.started;
  job.timeout_ms = col.deadline - col.started;
  for (const auto& [key, m] : col.members) {
    Member copy = m;
    // What the links saw says more than a missing answer: a watched peer
    // that went silent, or closed without a goodbye.
    auto p = peers_.find(key);
    if (copy.reach == Reach::kUnresponsive && p != peers_.end() &&
        p->second.state == Reach::kUnresponsive) {
      const std::size_t paren = copy.why.find(" (stopped");
      copy.why = copy.why.substr(0, paren) + "; " + p->second.why;
    } else if (copy.reach == Reach::kUnresponsive && p != peers_.end() &&
               p->second.state == Reach::kDead) {
      copy.reach = Reach::kDead;
      copy.why = p->second.why;
      copy.dead_since_ms = p->second.since;
    }
    job.members.push_back(std::move(copy));
  }
  std::lock_guard lock(mu_);
  for (const auto& c : comms_) {
    bool seen = false;
    for (const CommMembers& known : job.comms) seen = seen || known.hash == c->hash();
    if (!seen) job.comms.push_back(CommMembers{c->hash(), c->processes()});
  }
  return job;
}

void Engine::finish_collection(int cid) {
  auto it = collections_.find(cid);
  if (it == collections_.end()) return;
  Collection col = std::move(it->second);
  collections_.erase(it);
  // Queries still open for it are abandoned.
  for (auto& [id, c] : conns_) {
    if (c.kind == Kind::kQueryOut && c.collection == cid) {
      c.collection = -1;
      c.closing = true;
      c.deadline = now_ms();
    }
  }
  if (col.purpose == Collection::Purpose::kStatus) {
    auto c = conns_.find(col.client);
    if (c == conns_.end()) return;
    const JobView job = job_view(col);
    queue_text(c->second, c->second.json ? render_json(job) : render_text(job, c->second.verbose));
    c->second.closing = true;
    return;
  }
  // A stall probe: log (or fail) with what the waited-on process says.
  const JobView job = job_view(col);
  const std::string words = peer_words(col, job);
  // A member that is dead, or freed its communicators, takes no further
  // part: no collective of this communicator can complete, so the stall
  // fails now rather than after stall_fail.
  const std::string lost = col.fail ? std::string() : lost_member(col, job);
  StreamProgress& sp = col.comm->stream(col.stream);
  // Counted as the watchdog counts it: a time this process was not
  // scheduled is not the peer's stall.
  const uint64_t now = now_ms();
  const uint64_t idle = now - std::min(now, std::max(sp.last_progress_ms.load(), awake_since_));
  std::string what;
  {
    std::lock_guard lock(sp.mu);
    what = sp.waiting_what;
  }
  const std::string head =
      "rank " + std::to_string(col.comm->rank()) + " of comm " + hex(col.comm->hash()) +
      ", proxy stream " + std::to_string(col.stream) +
      (sp.block.load() >= 0 ? ", basic block " + std::to_string(sp.block.load()) : std::string()) +
      ": no progress for " + std::to_string(idle) + " ms (" +
      (col.fail ? "health.stall_fail_s" : "health.stall_warn_s") + "): ";
  const std::string tail = col.peer_rank >= 0
                               ? "waiting on rank " + std::to_string(col.peer_rank) + " " + words
                               : "waiting on a peer the transport does not name";
  auto state = stalls_.find({col.comm.get(), col.stream});
  if (state != stalls_.end()) {
    state->second.probing = false;
    state->second.recheck_at = now + settings_.stall_warn_ms;
    state->second.failed = state->second.failed || !lost.empty();
  }
  if (col.recheck && lost.empty()) return;  // warned already, nothing new
  const std::string text =
      head + tail + (what.empty() ? "" : "; " + what) +
      (lost.empty() ? "" : "; failing now, not after health.stall_fail_s: " + lost);
  if (col.fail || !lost.empty()) {
    std::lock_guard lock(sp.mu);
    sp.verdict.set = true;
    sp.verdict.text = text;
    sp.has_verdict.store(true, std::memory_order_release);
    return;
  }
  NCCOM_WARN("health: %s", text.c_str());
  Registry::instance().record_warning(col.comm->hash(), col.comm->rank(), text);
}

// "(host b, pid 4242): unresponsive: no answer within 1000 ms" or
// "(host b, pid 4242): alive, itself waiting on rank 6, channel 0, for 57.0 s";
// when that peer answers, the communicator's ranks that do not (a stall
// often passes through a peer that itself waits on its device).
std::string Engine::peer_words(const Collection& col, const JobView& job) const {
  auto member_of = [&job](uint64_t key) -> const Member* {
    for (const Member& m : job.members) {
      if (m.process == key) return &m;
    }
    return nullptr;
  };
  std::string text;
  const Member* peer = nullptr;
  if (col.peer_rank >= 0 && col.peer_rank < col.comm->nranks()) {
    peer = member_of(col.comm->processes()[static_cast<std::size_t>(col.peer_rank)]);
  }
  if (peer != nullptr) {
    text = "(host " + peer->host + ", pid " + std::to_string(peer->pid) + "): ";
    if (peer->reach != Reach::kAnswered) return text + reach_name(peer->reach) + ": " + peer->why;
    text += "alive";
    if (peer->snapshot) {
      for (const StreamSnap& s : peer->snapshot->streams) {
        if (s.comm != col.comm->hash() || s.id != col.stream) continue;
        if (s.running && s.peer >= 0 && s.idle_ms >= 1000) {
          text += ", itself waiting on rank " + std::to_string(s.peer) + ", channel " +
                  std::to_string(s.channel) + ", for " + seconds(s.idle_ms);
        } else if (!s.running) {
          text += ", its proxy is between executions of this stream (began " +
                  std::to_string(s.started) + ", completed " + std::to_string(s.completed) +
                  "): it waits on its device, e.g. for a peer on its own host";
        } else {
          text += ", moving (idle " + seconds(s.idle_ms) + ")";
        }
      }
    }
  } else if (col.peer_rank >= 0) {
    text = "(its process is not known to the health mesh)";
  }
  const auto& procs = col.comm->processes();
  for (std::size_t r = 0; r < procs.size(); ++r) {
    const Member* m = member_of(procs[r]);
    if (m == nullptr || m == peer || m->reach == Reach::kAnswered) continue;
    text += "; in this communicator rank " + std::to_string(r) + " (host " + m->host + ", pid " +
            std::to_string(m->pid) + ") is " + reach_name(m->reach) + ": " + m->why;
  }
  return text;
}

// "rank 3 (host b, pid 4242) of this communicator is dead, so …" for the
// lowest rank of the probed communicator whose process is dead or left
// ("" when every member is alive or merely unresponsive: a stopped process
// may resume).
std::string Engine::lost_member(const Collection& col, const JobView& job) const {
  const auto& procs = col.comm->processes();
  for (std::size_t r = 0; r < procs.size(); ++r) {
    for (const Member& m : job.members) {
      if (m.process != procs[r] || (m.reach != Reach::kDead && m.reach != Reach::kLeft)) continue;
      return "rank " + std::to_string(r) + " (host " + m.host + ", pid " + std::to_string(m.pid) +
             ") of this communicator " +
             (m.reach == Reach::kDead ? "is dead" : "has freed its communicators") +
             ", so none of its collectives can complete";
    }
  }
  return {};
}

void Engine::watch_stalls(uint64_t now) {
  std::vector<std::shared_ptr<CommRecord>> comms;
  {
    std::lock_guard lock(mu_);
    comms = comms_;
  }
  for (const auto& c : comms) {
    for (int s = 0; s < kStreams; ++s) {
      StreamProgress& sp = c->stream(s);
      StallState& st = stalls_[{c.get(), s}];
      const uint64_t started = sp.started.load();
      if (!sp.running.load() || st.started != started) {
        st = StallState{};
        st.started = started;
        if (!sp.running.load()) continue;
      }
      const uint64_t idle = now - std::min(now, std::max(sp.last_progress_ms.load(), awake_since_));
      const bool warn = settings_.stall_warn_ms != 0 && idle >= settings_.stall_warn_ms;
      const bool fail = settings_.stall_fail_ms != 0 && idle >= settings_.stall_fail_ms;
      if (idle < 1000 || st.probing) {
        if (idle < 1000) st.warned = st.failed = false;
        continue;
      }
      // The scheduler says what the stream waits on at its first tick after a
      // second without progress; a first probe waits for that, up to a
      // second past its bound, or its message could not name the peer (with
      // health.stall_warn_s = 1 the two clocks meet).
      if (!st.warned && !sp.waiting_known.load(std::memory_order_acquire) &&
          idle < std::max<uint64_t>(settings_.stall_warn_ms, 1000) + 1000)
        continue;
      // After the WARN, every stall_warn period: has a member died or left
      // since? (It fails the stall then; see finish_collection.)
      const bool recheck = st.warned && !st.failed && warn && now >= st.recheck_at;
      if ((warn && !st.warned) || (fail && !st.failed) || recheck) {
        const bool for_fail = fail && !st.failed;
        const bool first_warn = warn && !st.warned;
        st.warned = true;
        st.failed = st.failed || for_fail;
        st.probing = true;
        Collection col;
        col.purpose = Collection::Purpose::kProbe;
        col.comm = c;
        col.stream = s;
        col.fail = for_fail;
        col.recheck = !for_fail && !first_warn;
        col.peer_rank = sp.waiting_peer.load();
        std::vector<uint64_t> targets;
        for (uint64_t key : c->processes()) {
          if (key != card_.process && key != 0 &&
              std::find(targets.begin(), targets.end(), key) == targets.end())
            targets.push_back(key);
        }
        start_collection(std::move(col), targets);
      }
    }
  }
  // Forget streams of communicators that are gone.
  for (auto it = stalls_.begin(); it != stalls_.end();) {
    bool live = false;
    for (const auto& c : comms) live = live || c.get() == it->first.first;
    it = live ? std::next(it) : stalls_.erase(it);
  }
}

}  // namespace nccom::health::engine
