// The engine's mesh: peer states, the links to the ring's successors,
// keep-alives, deadlines and silence (engine.h).
#include "health/engine.h"
#include "log/log.h"

#include <sys/socket.h>

#include <algorithm>

namespace nccom::health::engine {

namespace {
constexpr uint64_t kLossBurstMs = 30000;
}  // namespace

void Engine::set_state(Peer& p, uint64_t key, Reach state, const std::string& why, uint64_t now) {
  if (p.state == state) return;
  const Reach before = p.state;
  p.state = state;
  p.since = now;
  p.why = why;
  if (p.refs == 0) return;
  const std::string label =
      rank_label(key) + " (host " + p.card.host + ", pid " + std::to_string(p.card.pid) + ")";
  if (state == Reach::kDead) {
    // Every communicator of this process that has the dead process as a
    // member learns it (for the waits that need every member).
    std::lock_guard lock(mu_);
    for (const auto& c : comms_) {
      const auto& members = c->processes();
      for (std::size_t r = 0; r < members.size(); ++r) {
        if (members[r] != key) continue;
        c->note_lost("rank " + std::to_string(r) + " (host " + p.card.host + ", pid " +
                     std::to_string(p.card.pid) + ") is dead: " + why);
        break;
      }
    }
  }
  if (state == Reach::kUnresponsive || state == Reach::kDead) {
    // The first member lost is the likely cause; the members lost within
    // kLossBurstMs after it are most often ranks ending on its failure:
    // INFO, not a WARN each. A loss after that starts a new burst.
    if (burst_since_ == 0 || now - burst_since_ > kLossBurstMs) {
      burst_since_ = now;
      NCCOM_WARN("health: %s is %s: %s", label.c_str(), reach_name(state), why.c_str());
    } else {
      NCCOM_INFO(log::kInit, "health: %s is %s too: %s", label.c_str(), reach_name(state),
                 why.c_str());
    }
  } else if (state == Reach::kAnswered && before != Reach::kLeft) {
    NCCOM_WARN("health: %s is alive again: %s", label.c_str(), why.c_str());
  }
}

void Engine::refused(Peer& p, uint64_t key, uint64_t now) {
  if (p.refused_since == 0) {
    p.refused_since = now;
    return;
  }
  if (now - p.refused_since + settings_.keepalive_ms / 10 >= settings_.keepalive_ms)
    set_state(p, key, Reach::kDead, "its health port refuses connections: its process is gone",
              now);
}

void Engine::pass_on_left(uint64_t key, int from) {
  const std::vector<uint8_t> notice = left_frame(key);
  for (auto& [id, c] : conns_) {
    if (id == from || c.peer == key || !c.hello_done || c.closing) continue;
    if (c.kind != Kind::kLinkIn && c.kind != Kind::kLinkOut) continue;
    queue(c, notice);
  }
}

std::string Engine::rank_label(uint64_t process) const {
  std::lock_guard lock(mu_);
  for (const auto& c : comms_) {
    const auto& procs = c->processes();
    for (std::size_t r = 0; r < procs.size(); ++r) {
      if (procs[r] == process) return "rank " + std::to_string(r);
    }
  }
  return "process " + hex(process);
}

void Engine::drop_link(int id, FrameType why) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  Conn& c = it->second;
  // Every connected link says goodbye, also one whose hello was not answered
  // yet: the peer may have admitted it already (its side is established), and
  // would call a link closed without a goodbye dead. Links made at the very
  // end, when a leaving peer reshapes the ring, are exactly those.
  if (!c.connecting) {
    // Closing a socket with unread bytes makes the kernel reset the
    // connection, and a reset can discard the goodbye from the peer's
    // receive queue: read what has arrived first, then send and shut down.
    uint8_t sink[512];
    for (int i = 0; i < 64; ++i) {
      auto got = c.sock.recv_some(sink, sizeof sink);
      if (!got || *got == 0) break;
    }
    queue(c, frame(why));
    (void)c.sock.send_some(c.out.data(), c.out.size());  // best effort, never waits
    ::shutdown(c.sock.fd(), SHUT_WR);
  }
  conns_.erase(it);
}

void Engine::abandon() {
  peer_listener_.close();
  client_.close();
  for (auto& [id, c] : conns_) c.sock.close();
  for (int& fd : wake_fds_) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
}

// The ring of live processes by key; each links to its next kNeighbours.
void Engine::refresh_links(uint64_t now) {
  std::vector<uint64_t> ring{card_.process};
  for (const auto& [key, p] : peers_) {
    if (p.refs > 0 && p.state != Reach::kDead && p.state != Reach::kLeft) ring.push_back(key);
  }
  std::sort(ring.begin(), ring.end());
  const auto me = std::find(ring.begin(), ring.end(), card_.process) - ring.begin();
  std::vector<uint64_t> wanted;
  for (int k = 1; k <= kNeighbours && k < static_cast<int>(ring.size()); ++k) {
    wanted.push_back(ring[static_cast<std::size_t>(me + k) % ring.size()]);
  }
  for (auto& [key, p] : peers_) {
    const bool want = std::find(wanted.begin(), wanted.end(), key) != wanted.end();
    if (!want && p.link != 0) {
      drop_link(p.link, FrameType::kUnlink);
      p.link = 0;
    }
    if (want && p.link == 0 && now >= p.next_connect) {
      bool in_progress = false;
      auto s = start_connect(p.card.endpoint, in_progress);
      p.next_connect = now + settings_.keepalive_ms;
      if (!s) {
        if (s.error().status == NRT_COLL_PENDING && p.state != Reach::kLeft) refused(p, key, now);
        continue;
      }
      Conn c = outbound(Kind::kLinkOut, std::move(*s), in_progress, key, p, Purpose::kLink);
      c.last_tx = now;
      p.link = add_conn(std::move(c));
      if (p.last_heard == 0) p.last_heard = now;
    }
    p.watched = want || p.link != 0;
  }
  for (const auto& [id, c] : conns_) {
    if (c.kind != Kind::kLinkIn) continue;
    auto p = peers_.find(c.peer);
    if (p != peers_.end()) p->second.watched = true;
  }
}

void Engine::keep_alive(uint64_t now) {
  for (auto& [id, c] : conns_) {
    if ((c.kind == Kind::kLinkIn || c.kind == Kind::kLinkOut) && c.hello_done &&
        now - c.last_tx >= settings_.keepalive_ms && c.out.size() < 4096) {
      queue(c, frame(FrameType::kKeepAlive));
      c.last_tx = now;  // counted as sent when queued: a full socket is the peer's silence
    }
  }
}

void Engine::discount_absence(uint64_t gap, uint64_t now) {
  NCCOM_WARN(
      "health: this process was not scheduled for %s (stopped, swapped out or starved of CPU?); "
      "its peers' keep-alives and its stall clocks are timed afresh",
      seconds(gap).c_str());
  for (auto& [key, p] : peers_) {
    if (p.last_heard != 0) p.last_heard = std::min(now, p.last_heard + gap);
  }
  for (auto& [id, c] : conns_) {
    if (c.deadline != 0) c.deadline += gap;
  }
  for (auto& [id, col] : collections_) col.started += gap;
  awake_since_ = now;
}

void Engine::timers(uint64_t now) {
  const uint64_t silent_limit =
      settings_.keepalive_ms * static_cast<uint64_t>(settings_.timeout_factor);
  std::vector<int> waiting;
  for (const auto& [id, c] : conns_) {
    if (c.has_hello) waiting.push_back(id);
  }
  for (int id : waiting) {
    admit(id, now);
    auto it = conns_.find(id);
    if (it != conns_.end() && !it->second.has_hello && !it->second.in.empty()) consume(id);
  }
  std::vector<std::pair<int, std::string>> expired;
  for (auto& [id, c] : conns_) {
    if (c.deadline != 0 && now >= c.deadline) {
      expired.emplace_back(id, "timed out");
    }
  }
  for (auto& [id, why] : expired) {
    auto it = conns_.find(id);
    if (it == conns_.end()) continue;
    if (it->second.kind == Kind::kQueryOut && it->second.collection >= 0) {
      const int col = it->second.collection;
      const uint64_t key = it->second.peer;
      it->second.collection = -1;
      auto cit = collections_.find(col);
      const uint64_t waited = cit != collections_.end() ? now - cit->second.started : 0;
      member_done(col, key, Reach::kUnresponsive,
                  std::string(it->second.connecting ? "its port did not accept" : "no answer") +
                      " within " + std::to_string(waited) + " ms (stopped, swapping or wedged?)",
                  std::nullopt);
    }
    close_conn(id, why);
  }
  // Silent links.
  for (auto& [key, p] : peers_) {
    if (p.state == Reach::kDead || p.state == Reach::kLeft || p.last_heard == 0) continue;
    bool linked = p.link != 0;
    for (const auto& [id, c] : conns_)
      linked = linked || (c.kind == Kind::kLinkIn && c.peer == key);
    if (!linked) continue;
    if (now - p.last_heard >= silent_limit && p.state == Reach::kAnswered) {
      set_state(p, key, Reach::kUnresponsive,
                "no keep-alive for " + seconds(now - p.last_heard) +
                    ": its process is stopped, "
                    "swapping or wedged, or its host is unreachable",
                now);
    }
  }
}

}  // namespace nccom::health::engine
