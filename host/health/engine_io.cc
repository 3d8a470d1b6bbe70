// The engine's input and output: accepting, reading, frames, admission,
// client lines, writing (engine.h).
#include "health/engine.h"
#include "log/log.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace nccom::health::engine {

void Engine::accept_all(const Socket& listener, Kind kind) {
  for (int n = 0; n < 64; ++n) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    const int fd = ::accept4(listener.fd(), reinterpret_cast<sockaddr*>(&ss), &len,
                             SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;  // EAGAIN, or out of descriptors: try on the next tick
    // Connections not yet admitted are bounded: a flood of them must not
    // take the process's descriptors from the job.
    int unadmitted = 0;
    for (const auto& [id, other] : conns_) {
      unadmitted += other.kind == Kind::kInbound || other.kind == Kind::kClient ? 1 : 0;
    }
    if (unadmitted >= kMaxUnadmitted) {
      ::close(fd);
      continue;
    }
    Conn c;
    c.kind = kind;
    c.sock = Socket(fd);
    const uint64_t now = now_ms();
    c.last_tx = now;
    if (kind == Kind::kClient) {
      int clients = 0;
      for (const auto& [id, other] : conns_) clients += other.kind == Kind::kClient ? 1 : 0;
      c.deadline = now + kClientMs;
      c.timeout_ms = settings_.query_timeout_ms;
      if (clients >= settings_.max_clients) {
        queue_text(c, "ERROR busy: " + std::to_string(settings_.max_clients) +
                          " clients are being served; try again\n");
        c.closing = true;
      }
    } else {
      const int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      c.deadline = now + kHandshakeMs;
    }
    add_conn(std::move(c));
  }
}

void Engine::on_readable(int id) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  Conn& c = it->second;
  uint8_t buf[16384];
  std::string closed;  // the peer closed (or failed): after what it sent is read
  for (;;) {
    auto got = c.sock.recv_some(buf, sizeof buf);
    if (!got) {
      closed = got.error().message;
      break;
    }
    if (*got == 0) break;
    c.in.insert(c.in.end(), buf, buf + *got);
    if (c.kind == Kind::kInbound && c.in.size() > kMaxUnadmittedBytes) {
      close_conn(id, "more than " + std::to_string(kMaxUnadmittedBytes) +
                         " bytes before its hello was admitted");
      return;
    }
    if (c.in.size() > kFrameHeaderBytes + kMaxPayload) break;
  }
  consume(id);
  auto still = conns_.find(id);
  if (closed.empty() || still == conns_.end()) return;
  if (still->second.kind == Kind::kClient) {
    // A client that sent its commands and half-closed (nc -N, shutdown
    // SHUT_WR) still gets its answers; the connection closes once they are
    // out (a STATUS still gathering closes it when it finishes).
    Conn& cc = still->second;
    cc.read_shut = true;
    bool answering = false;
    for (const auto& [cid, col] : collections_) {
      answering = answering || (col.purpose == Collection::Purpose::kStatus && col.client == id);
    }
    if (!answering) cc.closing = true;
    return;
  }
  close_conn(id, closed);
}

void Engine::consume(int id) {
  if (conns_.at(id).kind == Kind::kClient) {
    for (;;) {
      auto conn = conns_.find(id);
      if (conn == conns_.end()) return;
      Conn& cc = conn->second;
      if (cc.closing) {
        cc.in.clear();
        return;
      }
      auto nl = std::find(cc.in.begin(), cc.in.end(), '\n');
      if (nl == cc.in.end()) {
        if (cc.in.size() > kClientLineBytes) {
          queue_text(cc, "ERROR line longer than " + std::to_string(kClientLineBytes) + " bytes\n");
          cc.closing = true;
        }
        return;
      }
      std::string line(cc.in.begin(), nl);
      cc.in.erase(cc.in.begin(), nl + 1);
      on_client_line(id, std::move(line));
    }
  }
  // Frames.
  for (;;) {
    auto conn = conns_.find(id);
    if (conn == conns_.end()) return;
    Conn& cc = conn->second;
    if (cc.in.size() < kFrameHeaderBytes) return;
    if (cc.has_hello) return;  // frames behind a hello wait for its admission
    auto h = decode_header(cc.in.data(), cc.in.size());
    if (!h) {
      close_conn(id, h.error().message);
      return;
    }
    if (cc.in.size() < kFrameHeaderBytes + h->length) return;
    std::vector<uint8_t> payload(cc.in.begin() + kFrameHeaderBytes,
                                 cc.in.begin() + kFrameHeaderBytes + h->length);
    cc.in.erase(cc.in.begin(), cc.in.begin() + kFrameHeaderBytes + h->length);
    on_frame(id, *h, payload.data());
  }
}

void Engine::on_hello(int id, const FrameHeader& h, const uint8_t* payload, uint64_t now) {
  Conn& c = conns_.at(id);
  if (h.type != FrameType::kHello) {
    close_conn(id, "the first frame was not a hello");
    return;
  }
  auto hello = Hello::decode(payload, h.length);
  if (!hello) {
    close_conn(id, hello.error().message);
    return;
  }
  if (c.kind == Kind::kInbound) {
    c.hello = *hello;
    c.has_hello = true;
    admit(id, now);
    return;
  }
  if (hello->process != c.peer) {
    close_conn(id, "a different process answered (" + hex(hello->process) + ")");
    return;
  }
  c.hello_done = true;
  c.deadline = c.kind == Kind::kQueryOut ? c.deadline : 0;
  if (auto p = peers_.find(c.peer); p != peers_.end()) p->second.refused_since = 0;
}

void Engine::on_keep_alive(const Conn& c, uint64_t now) {
  auto p = peers_.find(c.peer);
  if (p == peers_.end()) return;
  p->second.last_heard = now;
  p->second.refused_since = 0;
  if (p->second.state == Reach::kUnresponsive || p->second.state == Reach::kDead) {
    set_state(p->second, c.peer, Reach::kAnswered,
              "answering again after " + seconds(now - p->second.since), now);
  }
}

void Engine::on_left(int id, const FrameHeader& h, const uint8_t* payload, uint64_t now) {
  Conn& c = conns_.at(id);
  if (c.kind != Kind::kLinkIn && c.kind != Kind::kLinkOut) {
    close_conn(id, "a left notice off a link");
    return;
  }
  auto key = decode_left(payload, h.length);
  if (!key) {
    close_conn(id, key.error().message);
    return;
  }
  auto p = peers_.find(*key);
  if (*key == card_.process || p == peers_.end() || p->second.state == Reach::kLeft) return;
  set_state(p->second, *key, Reach::kLeft,
            "it freed its communicators and said goodbye (passed on by " + rank_label(c.peer) + ")",
            now);
  pass_on_left(*key, id);
}

void Engine::on_snapshot(int id, const FrameHeader& h, const uint8_t* payload) {
  Conn& c = conns_.at(id);
  if (c.kind != Kind::kQueryOut) {
    close_conn(id, "an unasked snapshot");
    return;
  }
  auto snap = parse_snapshot(std::string_view(reinterpret_cast<const char*>(payload), h.length));
  const int col = c.collection;
  const uint64_t key = c.peer;
  c.collection = -1;
  c.closing = true;
  if (!snap) {
    member_done(col, key, Reach::kUnresponsive, "its answer was malformed: " + snap.error().message,
                std::nullopt);
  } else {
    member_done(col, key, Reach::kAnswered, "", std::move(*snap));
  }
}

void Engine::on_frame(int id, const FrameHeader& h, const uint8_t* payload) {
  Conn& c = conns_.at(id);
  const uint64_t now = now_ms();
  if (!c.hello_done) {
    on_hello(id, h, payload, now);
    return;
  }
  switch (h.type) {
    case FrameType::kKeepAlive: on_keep_alive(c, now); return;
    case FrameType::kGoodbye: c.goodbye = true; return;
    case FrameType::kUnlink:
      c.peer = 0;
      c.closing = true;
      return;  // no verdict on the peer
    case FrameType::kLeft: on_left(id, h, payload, now); return;
    case FrameType::kQuery: {
      if (c.kind != Kind::kQueryIn) {
        close_conn(id, "a query on a link");
        return;
      }
      const auto links = link_views(now);
      queue(c, frame(FrameType::kSnapshot,
                     Registry::instance().snapshot_text(card_.process, static_cast<int>(card_.pid),
                                                        card_.host, links)));
      return;
    }
    case FrameType::kSnapshot: on_snapshot(id, h, payload); return;
    case FrameType::kHello: close_conn(id, "a second hello"); return;
  }
}

void Engine::admit(int id, uint64_t now) {
  Conn& c = conns_.at(id);
  bool known = false;
  {
    std::lock_guard lock(mu_);
    for (const auto& [hash, secret] : secrets_) known = known || secret == c.hello.secret;
  }
  if (!known) {
    if (now < c.deadline) return;
    NCCOM_INFO(log::kInit,
               "health: refused a connection from %s: its secret is not one of this "
               "process's communicators'",
               c.sock.describe().c_str());
    close_conn(id, "wrong secret");
    return;
  }
  c.has_hello = false;
  c.peer = c.hello.process;
  c.kind = c.hello.purpose == Purpose::kLink ? Kind::kLinkIn : Kind::kQueryIn;
  Hello answer;
  answer.process = card_.process;
  answer.purpose = c.hello.purpose;
  queue(c, answer.frame());
  c.hello_done = true;
  c.deadline = 0;
  if (c.kind == Kind::kLinkIn) {
    auto p = peers_.find(c.peer);
    if (p != peers_.end()) {
      p->second.last_heard = now;
      if (p->second.state != Reach::kAnswered)
        set_state(p->second, c.peer, Reach::kAnswered, "its link is back", now);
    }
  }
}

void Engine::on_client_line(int id, std::string line) {
  Conn& c = conns_.at(id);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  const std::string cmd = upper(line);
  if (cmd.rfind("CLIENT PROTOCOL", 0) == 0) {
    queue_text(c, kServerProtocol);
  } else if (cmd.rfind("TIMEOUT ", 0) == 0 || cmd.rfind("TIMEOUT_MS ", 0) == 0) {
    const bool ms = cmd.rfind("TIMEOUT_MS ", 0) == 0;
    const std::string arg = line.substr(ms ? 11 : 8);
    char* end = nullptr;
    const long v = std::strtol(arg.c_str(), &end, 10);
    if (end == arg.c_str() || *end != '\0' || v < 0 || v > (ms ? 600000 : 600)) {
      queue_text(c,
                 "ERROR bad timeout \"" + arg + "\": " + (ms ? "0..600000 ms" : "0..600 s") + "\n");
      c.closing = true;
      return;
    }
    const uint64_t t = static_cast<uint64_t>(v) * (ms ? 1 : 1000);
    c.timeout_ms = t == 0 ? settings_.query_timeout_ms : t;
    c.deadline = now_ms() + std::max(kClientMs, c.timeout_ms + kClientMs);
    queue_text(c, "OK\n");
  } else if (cmd == "SET FORMAT JSON" || cmd == "SET FORMAT TEXT") {
    c.json = cmd == "SET FORMAT JSON";
    queue_text(c, "OK\n");
  } else if (cmd == "STATUS" || cmd == "VERBOSE STATUS") {
    c.verbose = cmd == "VERBOSE STATUS";
    Collection col;
    col.purpose = Collection::Purpose::kStatus;
    col.client = id;
    std::vector<uint64_t> targets;
    for (const auto& [key, p] : peers_) {
      if (p.refs > 0) targets.push_back(key);
    }
    start_collection(std::move(col), targets);
  } else if (cmd == "QUIT") {
    c.closing = true;
  } else {
    queue_text(c, "ERROR unknown command \"" + line.substr(0, 64) +
                      "\"; known: CLIENT PROTOCOL <n>, TIMEOUT <s>, TIMEOUT_MS <ms>, SET FORMAT "
                      "json|text, STATUS, VERBOSE STATUS, QUIT\n");
    c.closing = true;
  }
}

void Engine::on_writable(int id) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  Conn& c = it->second;
  if (c.connecting) {
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(c.sock.fd(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      close_conn(id, err == ECONNREFUSED ? "connection refused" : std::strerror(err));
      return;
    }
    c.connecting = false;
  }
  while (!c.out.empty()) {
    auto sent = c.sock.send_some(c.out.data(), c.out.size());
    if (!sent) {
      // A peer that said goodbye and then reset the connection (it exited
      // with bytes unread) fails this write with its goodbye still waiting
      // to be read: read first, so the close is judged with what it said.
      const std::string why = sent.error().message;
      on_readable(id);
      if (conns_.count(id) != 0) close_conn(id, why);
      return;
    }
    if (*sent == 0) return;
    c.out.erase(c.out.begin(), c.out.begin() + static_cast<std::ptrdiff_t>(*sent));
    c.last_tx = now_ms();
  }
  if (c.closing) close_conn(id, "done");
}

}  // namespace nccom::health::engine
