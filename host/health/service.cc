#include "health/service.h"

#include "bootstrap/socket.h"
#include "health/report.h"
#include "health/snapshot.h"
#include "log/log.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <thread>

namespace nccom::health {
namespace {

using bootstrap::Socket;
using bootstrap::SocketAddress;

constexpr int kNeighbours = 2;           // successors each process links to
constexpr uint64_t kHandshakeMs = 5000;  // an inbound connection's hello
constexpr uint64_t kClientMs = 10000;    // a client's whole session
constexpr std::size_t kClientLineBytes = 256;
constexpr uint64_t kTickMs = 250;  // the longest poll
constexpr uint64_t kGoodbyeWaitMs = 200;
constexpr int kMaxUnadmitted = 256;                // inbound connections and clients at once
constexpr std::size_t kMaxUnadmittedBytes = 4096;  // read from one before its hello is admitted
constexpr const char* kServerProtocol = "SERVER PROTOCOL 2\n";

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

std::string secs(uint64_t ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(ms) / 1000.0);
  return buf;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

uint64_t random_key() {
  std::random_device rd;
  uint64_t key = 0;
  while (key == 0) key = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  return key;
}

bool set_nonblocking(int fd) {
  const int flags = fcntl(fd, F_GETFL, 0);
  return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

// The client port: every process of the host binds it (SO_REUSEPORT).
Result<Socket> listen_shared(const SocketAddress& address) {
  Socket s(::socket(address.family(), SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.valid()) return make_error(NRT_FAILURE, std::string("socket: ") + std::strerror(errno));
  const int one = 1;
  setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (setsockopt(s.fd(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0 ||
      ::bind(s.fd(), address.sa(), address.length()) != 0 || ::listen(s.fd(), 128) != 0) {
    return make_error(NRT_FAILURE,
                      "cannot listen on " + address.to_string() + ": " + std::strerror(errno));
  }
  if (!set_nonblocking(s.fd())) return make_error(NRT_FAILURE, "fcntl O_NONBLOCK failed");
  return s;
}

// A non-blocking connect: the socket, connected or in progress.
Result<Socket> start_connect(const SocketAddress& to, bool& in_progress) {
  Socket s(::socket(to.family(), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!s.valid()) return make_error(NRT_FAILURE, std::string("socket: ") + std::strerror(errno));
  const int one = 1;
  setsockopt(s.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  in_progress = false;
  if (::connect(s.fd(), to.sa(), to.length()) != 0) {
    if (errno != EINPROGRESS) {
      return make_error(errno == ECONNREFUSED ? NRT_COLL_PENDING : NRT_FAILURE,
                        std::string(std::strerror(errno)));
    }
    in_progress = true;
  }
  return s;
}

enum class Kind { kInbound, kLinkIn, kLinkOut, kQueryIn, kQueryOut, kClient };

struct Conn {
  Kind kind = Kind::kInbound;
  Socket sock;
  std::vector<uint8_t> in;
  std::vector<uint8_t> out;
  uint64_t peer = 0;  // process key (links, queries)
  uint64_t deadline = 0;
  uint64_t last_rx = 0;
  uint64_t last_tx = 0;
  bool connecting = false;
  bool hello_done = false;
  bool closing = false;  // close once `out` is sent
  bool goodbye = false;  // the peer said goodbye
  Hello hello;           // an inbound connection's hello, until admitted
  bool has_hello = false;
  // Client sessions.
  bool json = false;
  bool verbose = false;
  uint64_t timeout_ms = 0;
  // Queries: the collection this connection answers to.
  int collection = -1;
};

struct Peer {
  Card card;
  uint64_t secret = 0;  // of a communicator both share
  int refs = 0;         // local communicators that have it as a rank
  Reach state = Reach::kAnswered;
  bool watched = false;  // a link of ours carries its keep-alives
  uint64_t since = 0;    // when `state` began
  uint64_t last_heard = 0;
  std::string why;
  int link = 0;  // the connection id of our out-link to it, 0: none
  uint64_t next_connect = 0;
};

// A STATUS being gathered, or a stall probe.
struct Collection {
  enum class Purpose { kStatus, kProbe } purpose = Purpose::kStatus;
  int client = 0;  // the client session's connection id (status)
  uint64_t started = 0;
  uint64_t deadline = 0;
  std::map<uint64_t, Member> members;
  int pending = 0;
  // Probes: the stream that stalled.
  std::shared_ptr<CommRecord> comm;
  int stream = 0;
  int peer_rank = -1;
  bool fail = false;  // the probe is for the failure message
};

struct StallState {
  bool warned = false;
  bool failed = false;
  bool probing = false;
  uint64_t started = 0;  // the execution the state is for
};

class Engine {
 public:
  Engine(const ServiceSettings& settings, Socket peer_listener, Socket client_listener, Card card);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  const Card& card() const { return card_; }
  void add_comm(const std::shared_ptr<CommRecord>& record, uint64_t secret,
                const std::vector<Card>& cards);
  void remove_comm(const CommRecord* record);
  void abandon();  // in a forked child: close every descriptor, run nothing

 private:
  void run();
  void wake();
  int add_conn(Conn conn);
  void close_conn(int id, const std::string& why);
  void queue(Conn& c, const std::vector<uint8_t>& bytes);
  void queue_text(Conn& c, const std::string& text);

  void accept_all(const Socket& listener, Kind kind);
  void on_readable(int id);
  // The complete lines (clients) or frames (peers) read so far.
  void consume(int id);
  void on_writable(int id);
  void on_frame(int id, const FrameHeader& h, const uint8_t* payload);
  void on_client_line(int id, std::string line);
  // An inbound hello is admitted once its secret is one of this process's
  // communicators'. A peer may finish its communicator's setup before this
  // process has: an unknown secret waits (up to the handshake bound) before
  // the connection is refused.
  void admit(int id, uint64_t now);

  void refresh_links(uint64_t now);
  // Closes a link on purpose, telling the peer why (goodbye or unlink).
  void drop_link(int id, FrameType why);
  void keep_alive(uint64_t now);
  void set_state(Peer& p, uint64_t key, Reach state, const std::string& why, uint64_t now);
  void timers(uint64_t now);

  int start_collection(Collection col, const std::vector<uint64_t>& targets);
  void member_done(int col, uint64_t key, Reach reach, const std::string& why,
                   std::optional<ProcessSnapshot> snap);
  void finish_collection(int col);
  JobView job_view(const Collection& col) const;
  ProcessSnapshot own_snapshot() const;
  std::vector<LinkView> link_views(uint64_t now) const;

  void watch_stalls(uint64_t now);
  std::string rank_label(uint64_t process) const;
  std::string peer_words(const Collection& col) const;

  ServiceSettings settings_;
  Socket peer_listener_;
  Socket client_listener_;
  Card card_;
  int wake_fds_[2] = {-1, -1};

  mutable std::mutex mu_;  // everything below is the thread's, except where noted
  std::condition_variable cv_;
  bool stop_ = false;
  bool dirty_ = false;     // comms changed (guarded by mu_)
  bool farewell_ = false;  // the last comm left: say goodbye (guarded by mu_)
  uint64_t farewell_done_ = 0, farewell_asked_ = 0;  // guarded by mu_
  std::vector<std::shared_ptr<CommRecord>> comms_;   // guarded by mu_
  std::multimap<uint64_t, uint64_t> secrets_;        // comm hash -> secret, guarded by mu_
  std::map<uint64_t, Peer> pending_peers_;           // added by add_comm, guarded by mu_
  std::vector<uint64_t> removed_peers_;              // guarded by mu_

  std::map<uint64_t, Peer> peers_;
  std::map<int, Conn> conns_;
  int next_id_ = 1;
  std::map<int, Collection> collections_;
  int next_collection_ = 1;
  std::map<std::pair<const CommRecord*, int>, StallState> stalls_;
  std::thread thread_;
};

Engine::Engine(const ServiceSettings& settings, Socket peer_listener, Socket client_listener,
               Card card)
    : settings_(settings),
      peer_listener_(std::move(peer_listener)),
      client_listener_(std::move(client_listener)),
      card_(std::move(card)) {
  if (pipe2(wake_fds_, O_CLOEXEC | O_NONBLOCK) != 0) wake_fds_[0] = wake_fds_[1] = -1;
  thread_ = std::thread([this] { run(); });
}

Engine::~Engine() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake();
  if (thread_.joinable()) thread_.join();
  for (int fd : wake_fds_) {
    if (fd >= 0) ::close(fd);
  }
}

void Engine::wake() {
  if (wake_fds_[1] >= 0) {
    const char c = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_fds_[1], &c, 1);
  }
}

void Engine::add_comm(const std::shared_ptr<CommRecord>& record, uint64_t secret,
                      const std::vector<Card>& cards) {
  {
    std::lock_guard lock(mu_);
    comms_.push_back(record);
    secrets_.emplace(record->hash(), secret);
    for (const Card& c : cards) {
      if (c.process == card_.process || !c.service) continue;
      Peer& p = pending_peers_[c.process];
      p.card = c;
      p.secret = secret;
      ++p.refs;
    }
    dirty_ = true;
  }
  wake();
}

void Engine::remove_comm(const CommRecord* record) {
  std::unique_lock lock(mu_);
  std::shared_ptr<CommRecord> gone;
  for (auto it = comms_.begin(); it != comms_.end(); ++it) {
    if (it->get() == record) {
      gone = *it;
      comms_.erase(it);
      break;
    }
  }
  if (!gone) return;
  for (auto it = secrets_.find(gone->hash()); it != secrets_.end() && it->first == gone->hash();) {
    it = secrets_.erase(it);
    break;
  }
  for (uint64_t key : gone->processes()) {
    if (key != card_.process) removed_peers_.push_back(key);
  }
  dirty_ = true;
  if (comms_.empty()) {
    farewell_ = true;
    const uint64_t ticket = ++farewell_asked_;
    lock.unlock();
    wake();
    lock.lock();
    cv_.wait_for(lock, std::chrono::milliseconds(kGoodbyeWaitMs),
                 [&] { return farewell_done_ >= ticket || stop_; });
    return;
  }
  lock.unlock();
  wake();
}

int Engine::add_conn(Conn conn) {
  const int id = next_id_++;
  conns_.emplace(id, std::move(conn));
  return id;
}

void Engine::queue(Conn& c, const std::vector<uint8_t>& bytes) {
  c.out.insert(c.out.end(), bytes.begin(), bytes.end());
}

void Engine::queue_text(Conn& c, const std::string& text) {
  c.out.insert(c.out.end(), text.begin(), text.end());
}

void Engine::close_conn(int id, const std::string& why) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  Conn& c = it->second;
  const uint64_t now = now_ms();
  if ((c.kind == Kind::kLinkIn || c.kind == Kind::kLinkOut) && c.peer != 0) {
    auto p = peers_.find(c.peer);
    if (p != peers_.end()) {
      if (p->second.link == id) p->second.link = 0;
      const bool refused = why.find("refused") != std::string::npos;
      if (c.goodbye) {
        set_state(p->second, c.peer, Reach::kLeft, "it freed its communicators and said goodbye",
                  now);
      } else if (!c.hello_done && !refused) {
        // Never established (its side may not know the communicator yet):
        // tried again on the next keep-alive period, no verdict.
      } else if (refused && p->second.state != Reach::kLeft) {
        set_state(p->second, c.peer, Reach::kDead,
                  "its health port refuses connections: its process is gone", now);
      } else if (p->second.state != Reach::kLeft) {
        set_state(p->second, c.peer, Reach::kDead,
                  "its health link closed without a goodbye (" + why +
                      "): the process exited or was killed",
                  now);
      }
      p->second.next_connect = now + settings_.keepalive_ms;
    }
  }
  if (c.kind == Kind::kQueryOut && c.collection >= 0) {
    const bool refused = why.find("refused") != std::string::npos;
    const bool reset =
        why.find("closed") != std::string::npos || why.find("reset") != std::string::npos;
    member_done(c.collection, c.peer, refused || reset ? Reach::kDead : Reach::kUnresponsive,
                refused ? "connection refused: its process is gone"
                : reset ? "it closed the connection without answering (" + why + ")"
                        : why,
                std::nullopt);
  }
  if (c.kind == Kind::kClient) {
    for (auto& [cid, col] : collections_) {
      if (col.client == id) col.client = 0;
    }
  }
  conns_.erase(it);
}

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
    c.last_rx = c.last_tx = now;
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
    c.last_rx = now_ms();
    if (c.kind == Kind::kInbound && c.in.size() > kMaxUnadmittedBytes) {
      close_conn(id, "more than " + std::to_string(kMaxUnadmittedBytes) +
                         " bytes before its hello was admitted");
      return;
    }
    if (c.in.size() > kFrameHeaderBytes + kMaxPayload) break;
  }
  consume(id);
  if (!closed.empty() && conns_.count(id) != 0) close_conn(id, closed);
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

void Engine::on_frame(int id, const FrameHeader& h, const uint8_t* payload) {
  Conn& c = conns_.at(id);
  const uint64_t now = now_ms();
  if (!c.hello_done) {
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
    } else if (hello->process != c.peer) {
      close_conn(id, "a different process answered (" + hex(hello->process) + ")");
      return;
    }
    c.hello_done = true;
    c.deadline = c.kind == Kind::kQueryOut ? c.deadline : 0;
    return;
  }
  switch (h.type) {
    case FrameType::kKeepAlive: {
      auto p = peers_.find(c.peer);
      if (p != peers_.end()) {
        p->second.last_heard = now;
        if (p->second.state == Reach::kUnresponsive || p->second.state == Reach::kDead) {
          set_state(p->second, c.peer, Reach::kAnswered,
                    "answering again after " + secs(now - p->second.since), now);
        }
      }
      return;
    }
    case FrameType::kGoodbye: c.goodbye = true; return;
    case FrameType::kUnlink:
      c.peer = 0;
      c.closing = true;
      return;  // no verdict on the peer
    case FrameType::kQuery: {
      if (c.kind != Kind::kQueryIn) {
        close_conn(id, "a query on a link");
        return;
      }
      std::string text;
      {
        const auto links = link_views(now);
        text = Registry::instance().snapshot_text(card_.process, static_cast<int>(card_.pid),
                                                  card_.host, links);
      }
      queue(c, frame(FrameType::kSnapshot, text));
      return;
    }
    case FrameType::kSnapshot: {
      if (c.kind != Kind::kQueryOut) {
        close_conn(id, "an unasked snapshot");
        return;
      }
      auto snap =
          parse_snapshot(std::string_view(reinterpret_cast<const char*>(payload), h.length));
      const int col = c.collection;
      const uint64_t key = c.peer;
      c.collection = -1;
      c.closing = true;
      if (!snap) {
        member_done(col, key, Reach::kUnresponsive,
                    "its answer was malformed: " + snap.error().message, std::nullopt);
      } else {
        member_done(col, key, Reach::kAnswered, "", std::move(*snap));
      }
      return;
    }
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
      close_conn(id, sent.error().message);
      return;
    }
    if (*sent == 0) return;
    c.out.erase(c.out.begin(), c.out.begin() + static_cast<std::ptrdiff_t>(*sent));
    c.last_tx = now_ms();
  }
  if (c.closing) close_conn(id, "done");
}

void Engine::set_state(Peer& p, uint64_t key, Reach state, const std::string& why, uint64_t now) {
  if (p.state == state) return;
  const Reach before = p.state;
  p.state = state;
  p.since = now;
  p.why = why;
  if (p.refs == 0) return;
  const std::string label =
      rank_label(key) + " (host " + p.card.host + ", pid " + std::to_string(p.card.pid) + ")";
  if (state == Reach::kUnresponsive || state == Reach::kDead) {
    NCCOM_WARN("health: %s is %s: %s", label.c_str(), reach_name(state), why.c_str());
  } else if (state == Reach::kAnswered && before != Reach::kLeft) {
    NCCOM_WARN("health: %s is alive again: %s", label.c_str(), why.c_str());
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
  if (c.hello_done) {
    queue(c, frame(why));
    (void)c.sock.send_some(c.out.data(), c.out.size());  // best effort, never waits
  }
  conns_.erase(it);
}

void Engine::abandon() {
  peer_listener_.close();
  client_listener_.close();
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
        if (s.error().status == NRT_COLL_PENDING) {
          set_state(p, key, Reach::kDead,
                    "its health port refuses connections: its process is gone", now);
        }
        continue;
      }
      Conn c;
      c.kind = Kind::kLinkOut;
      c.sock = std::move(*s);
      c.peer = key;
      c.connecting = in_progress;
      c.last_rx = c.last_tx = now;
      Hello hello;
      hello.secret = p.secret;
      hello.process = card_.process;
      hello.purpose = Purpose::kLink;
      queue(c, hello.frame());
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
                "no keep-alive for " + secs(now - p.last_heard) +
                    ": its process is stopped, "
                    "swapping or wedged, or its host is unreachable",
                now);
    }
  }
}

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
      m.why = "it freed its communicators " + secs(now - p->second.since) + " ago";
      collections_[cid].members[key] = m;
      continue;
    }
    m.reach = Reach::kUnresponsive;
    m.why = "no answer";
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
    Conn c;
    c.kind = Kind::kQueryOut;
    c.sock = std::move(*s);
    c.peer = key;
    c.connecting = in_progress;
    c.collection = cid;
    c.deadline = now + timeout;
    Hello hello;
    hello.secret = p->second.secret;
    hello.process = card_.process;
    hello.purpose = Purpose::kQuery;
    queue(c, hello.frame());
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
  const std::string words = peer_words(col);
  StreamProgress& sp = col.comm->stream(col.stream);
  const uint64_t idle = now_ms() - sp.last_progress_ms.load();
  std::string what;
  {
    std::lock_guard lock(sp.mu);
    what = sp.waiting_what;
  }
  const std::string head =
      "rank " + std::to_string(col.comm->rank()) + " of comm " + hex(col.comm->hash()) +
      ", proxy stream " + std::to_string(col.stream) + ": no progress for " + std::to_string(idle) +
      " ms (" + (col.fail ? settings_.stall_fail_knob : settings_.stall_warn_knob) + "): ";
  const std::string tail = col.peer_rank >= 0
                               ? "waiting on rank " + std::to_string(col.peer_rank) + " " + words
                               : "waiting on a peer the transport does not name";
  auto state = stalls_.find({col.comm.get(), col.stream});
  if (state != stalls_.end()) state->second.probing = false;
  const std::string text = head + tail + (what.empty() ? "" : "; " + what);
  if (col.fail) {
    std::lock_guard lock(sp.mu);
    sp.verdict.set = true;
    sp.verdict.text = text;
    sp.has_verdict.store(true, std::memory_order_release);
    return;
  }
  NCCOM_WARN("health: %s", text.c_str());
}

// "(host b, pid 4242): unresponsive: no answer within 1000 ms" or
// "(host b, pid 4242): alive, itself waiting on rank 6, channel 0, for 57.0 s";
// when that peer answers, the communicator's ranks that do not (a stall
// often passes through a peer that itself waits on its device).
std::string Engine::peer_words(const Collection& col) const {
  const JobView job = job_view(col);
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
                  std::to_string(s.channel) + ", for " + secs(s.idle_ms);
        } else if (!s.running) {
          text += ", its proxy is between executions of this stream (began " +
                  std::to_string(s.started) + ", completed " + std::to_string(s.completed) +
                  "): it waits on its device, e.g. for a peer on its own host";
        } else {
          text += ", moving (idle " + secs(s.idle_ms) + ")";
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
      const uint64_t idle = now - std::min(now, sp.last_progress_ms.load());
      const bool warn = settings_.stall_warn_ms != 0 && idle >= settings_.stall_warn_ms;
      const bool fail = settings_.stall_fail_ms != 0 && idle >= settings_.stall_fail_ms;
      if (idle < 1000 || st.probing) {
        if (idle < 1000) st.warned = st.failed = false;
        continue;
      }
      if ((warn && !st.warned) || (fail && !st.failed)) {
        const bool for_fail = fail && !st.failed;
        st.warned = true;
        st.failed = st.failed || for_fail;
        st.probing = true;
        Collection col;
        col.purpose = Collection::Purpose::kProbe;
        col.comm = c;
        col.stream = s;
        col.fail = for_fail;
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

void Engine::run() {
  for (;;) {
    bool farewell = false;
    uint64_t ticket = 0;
    {
      std::lock_guard lock(mu_);
      if (stop_) farewell_ = true;  // the process exits: goodbye first
      if (dirty_) {
        for (auto& [key, fresh] : pending_peers_) {
          Peer& p = peers_[key];
          const int refs = p.refs + fresh.refs;
          if (p.card.process == 0) {
            p = fresh;
          } else {
            p.card = fresh.card;
            p.secret = fresh.secret;
          }
          p.refs = refs;
          if (p.state == Reach::kLeft) p.state = Reach::kAnswered;  // a new communicator
        }
        pending_peers_.clear();
        for (uint64_t key : removed_peers_) {
          auto p = peers_.find(key);
          if (p != peers_.end() && --p->second.refs <= 0) p->second.refs = 0;
        }
        removed_peers_.clear();
        dirty_ = false;
      }
      farewell = farewell_;
      farewell_ = false;
      ticket = farewell_asked_;
    }
    const uint64_t now = now_ms();
    if (farewell) {
      // The last communicator is gone: goodbye on every link, sent now.
      std::vector<int> links;
      for (auto& [id, c] : conns_) {
        if (c.kind == Kind::kLinkIn || c.kind == Kind::kLinkOut) links.push_back(id);
      }
      for (int id : links) drop_link(id, FrameType::kGoodbye);
      for (auto& [key, p] : peers_) p.link = 0;
      for (auto it = peers_.begin(); it != peers_.end();) {
        it = it->second.refs == 0 ? peers_.erase(it) : std::next(it);
      }
      {
        std::lock_guard lock(mu_);
        farewell_done_ = ticket;
        if (stop_) break;
      }
      cv_.notify_all();
    }
    for (auto it = peers_.begin(); it != peers_.end();) {
      if (it->second.refs == 0 && it->second.link != 0) {
        drop_link(it->second.link, FrameType::kUnlink);
        it->second.link = 0;
      }
      it = it->second.refs == 0 ? peers_.erase(it) : std::next(it);
    }
    refresh_links(now);
    keep_alive(now);
    timers(now);
    watch_stalls(now);

    // Connections done talking: closed once their last bytes are out.
    std::vector<int> done;
    for (const auto& [id, c] : conns_) {
      if (c.closing && c.out.empty() && !c.connecting) done.push_back(id);
    }
    for (int id : done) close_conn(id, "done");

    std::vector<pollfd> fds;
    std::vector<int> ids;
    fds.push_back(pollfd{wake_fds_[0], POLLIN, 0});
    ids.push_back(-1);
    if (peer_listener_.valid()) {
      fds.push_back(pollfd{peer_listener_.fd(), POLLIN, 0});
      ids.push_back(-2);
    }
    if (client_listener_.valid()) {
      fds.push_back(pollfd{client_listener_.fd(), POLLIN, 0});
      ids.push_back(-3);
    }
    uint64_t wait = std::min(kTickMs, settings_.keepalive_ms);
    for (auto& [id, c] : conns_) {
      short events = c.connecting ? 0 : POLLIN;
      if (c.connecting || !c.out.empty()) events |= POLLOUT;
      fds.push_back(pollfd{c.sock.fd(), events, 0});
      ids.push_back(id);
      if (c.deadline != 0) wait = std::min(wait, c.deadline > now ? c.deadline - now : 0);
    }
    const int n = ::poll(fds.data(), fds.size(), static_cast<int>(wait));
    if (n <= 0) continue;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      const int id = ids[i];
      if (id == -1) {
        char buf[64];
        while (::read(wake_fds_[0], buf, sizeof buf) > 0) {}
      } else if (id == -2) {
        accept_all(peer_listener_, Kind::kInbound);
      } else if (id == -3) {
        accept_all(client_listener_, Kind::kClient);
      } else {
        if ((fds[i].revents & (POLLOUT | POLLERR | POLLHUP)) != 0) on_writable(id);
        if ((fds[i].revents & (POLLIN | POLLERR | POLLHUP)) != 0) on_readable(id);
      }
    }
  }
  cv_.notify_all();
}

// ---- The process's one engine -------------------------------------------------

std::mutex g_mu;
std::unique_ptr<Engine> g_engine;
ServiceSettings g_settings;
bool g_tried = false;
Card g_card;

}  // namespace

// A forked child has none of the parent's threads: it forgets the engine
// (closing its descriptors, so the parent's ports are the parent's alone) and
// starts its own with its first communicator.
void forget_in_child() {
  if (g_engine) {
    g_engine->abandon();
    (void)g_engine.release();  // its thread does not exist here
  }
  g_tried = false;
  g_card = Card{};
}

Card ensure_service(const ServiceSettings& settings, const bootstrap::SocketAddress& host,
                    const std::string& host_label) {
  std::lock_guard lock(g_mu);
  if (g_tried) return g_card;
  g_tried = true;
  static std::once_flag hooks;
  std::call_once(hooks, [] {
    (void)Registry::instance();  // built first, so destroyed after the engine stops
    std::atexit(stop_service);
    pthread_atfork(nullptr, nullptr, forget_in_child);
  });
  g_settings = settings;
  g_card.process = random_key();
  g_card.pid = static_cast<uint32_t>(getpid());
  g_card.host = host_label.empty() ? host_name() : host_label;
  if (!settings.enabled) {
    NCCOM_INFO(log::kInit, "health: the health service is off (health.enable = false)");
    return g_card;
  }
  SocketAddress bind_to = host;
  bind_to.set_port(0);
  auto listener = Socket::listen(bind_to);
  if (!listener || !set_nonblocking(listener->fd())) {
    NCCOM_WARN(
        "health: cannot start the health service: %s; this process is not watched and "
        "cannot answer nccom-ras",
        listener ? "fcntl failed" : listener.error().message.c_str());
    return g_card;
  }
  Socket client;
  if (!settings.client_address.empty()) {
    auto address = SocketAddress::parse(settings.client_address);
    auto shared = address ? listen_shared(*address) : Result<Socket>(address.take_error());
    if (shared) {
      client = std::move(*shared);
    } else {
      NCCOM_WARN(
          "health: no nccom-ras port in this process (%s): %s; set health.client_address "
          "to a free port or empty",
          settings.client_address.c_str(), shared.error().message.c_str());
    }
  }
  g_card.service = true;
  g_card.endpoint = listener->local_address();
  NCCOM_INFO(log::kInit, "health: service on %s, nccom-ras port %s, keep-alive %llu ms x %d",
             g_card.endpoint.to_string().c_str(),
             client.valid() ? settings.client_address.c_str() : "none",
             static_cast<unsigned long long>(settings.keepalive_ms), settings.timeout_factor);
  g_engine = std::make_unique<Engine>(settings, std::move(*listener), std::move(client), g_card);
  return g_card;
}

void add_comm(const std::shared_ptr<CommRecord>& record, uint64_t secret,
              const std::vector<Card>& cards) {
  std::lock_guard lock(g_mu);
  if (g_engine) g_engine->add_comm(record, secret, cards);
}

void remove_comm(const CommRecord* record) {
  Engine* engine = nullptr;
  {
    std::lock_guard lock(g_mu);
    engine = g_engine.get();
  }
  if (engine != nullptr) engine->remove_comm(record);
}

ServiceSettings service_settings() {
  std::lock_guard lock(g_mu);
  return g_settings;
}

void stop_service() {
  std::unique_ptr<Engine> engine;
  {
    std::lock_guard lock(g_mu);
    engine = std::move(g_engine);
    g_tried = false;
    g_card = Card{};
  }
  engine.reset();
}

}  // namespace nccom::health
