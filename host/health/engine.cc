// The engine: helpers, connections, the loop (engine.h).
#include "health/engine.h"

#include "log/guarded.h"
#include "log/log.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <random>

namespace nccom::health::engine {

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

Engine::Engine(const ServiceSettings& settings, Socket peer_listener, Socket client_listener,
               Card card)
    : settings_(settings),
      peer_listener_(std::move(peer_listener)),
      client_(settings.client_address, std::move(client_listener)),
      card_(std::move(card)) {
  if (pipe2(wake_fds_, O_CLOEXEC | O_NONBLOCK) != 0) wake_fds_[0] = wake_fds_[1] = -1;
  thread_ = std::thread([this] {
    (void)log::run_thread_body("health service",
                               "this process is no longer watched and cannot answer nccom-ras; "
                               "its communicators go on",
                               [this] { run(); });
    cv_.notify_all();  // a farewell waiter need not wait out its bound
  });
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
  uint64_t ticket = 0;
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
    port_check_ = true;
    ticket = ++port_check_asked_;
  }
  wake();
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, std::chrono::milliseconds(kPortCheckWaitMs),
               [&] { return port_checked_ >= ticket || stop_; });
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

Conn Engine::outbound(Kind kind, bootstrap::Socket sock, bool in_progress, uint64_t key,
                      const Peer& peer, Purpose purpose) const {
  Conn c;
  c.kind = kind;
  c.sock = std::move(sock);
  c.peer = key;
  c.connecting = in_progress;
  Hello hello;
  hello.secret = peer.secret;
  hello.process = card_.process;
  hello.purpose = purpose;
  queue(c, hello.frame());
  return c;
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
        const bool news = p->second.state != Reach::kLeft;
        set_state(p->second, c.peer, Reach::kLeft, "it freed its communicators and said goodbye",
                  now);
        if (news) pass_on_left(c.peer, id);
      } else if (!c.hello_done && !refused) {
        // Never established (its side may not know the communicator yet):
        // tried again on the next keep-alive period, no verdict.
      } else if (refused && p->second.state != Reach::kLeft) {
        this->refused(p->second, c.peer, now);
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

// The peers registered and released since the last turn join the table.
// Called with mu_ held.
void Engine::merge_peers() {
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

Engine::Asked Engine::take_asked() {
  std::lock_guard lock(mu_);
  if (stop_) farewell_ = true;  // the process exits: goodbye first
  if (dirty_) merge_peers();
  Asked a;
  a.farewell = farewell_;
  farewell_ = false;
  a.port_check = port_check_ && !stop_;
  port_check_ = false;
  a.port_ticket = port_check_asked_;
  a.farewell_ticket = farewell_asked_;
  return a;
}

bool Engine::say_goodbye(uint64_t ticket) {
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
    if (stop_) return true;
  }
  cv_.notify_all();
  return false;
}

void Engine::forget_unreferenced() {
  for (auto it = peers_.begin(); it != peers_.end();) {
    if (it->second.refs == 0 && it->second.link != 0) {
      drop_link(it->second.link, FrameType::kUnlink);
      it->second.link = 0;
    }
    it = it->second.refs == 0 ? peers_.erase(it) : std::next(it);
  }
}

void Engine::close_finished() {
  // Connections done talking: closed once their last bytes are out.
  std::vector<int> done;
  for (const auto& [id, c] : conns_) {
    if (c.closing && c.out.empty() && !c.connecting) done.push_back(id);
  }
  for (int id : done) close_conn(id, "done");
}

void Engine::poll_once(std::unique_lock<std::mutex>& io, uint64_t now) {
  constexpr int kWake = -1, kPeerListener = -2, kClientListener = -3;
  std::vector<pollfd> fds;
  std::vector<int> ids;
  fds.push_back(pollfd{wake_fds_[0], POLLIN, 0});
  ids.push_back(kWake);
  if (peer_listener_.valid()) {
    fds.push_back(pollfd{peer_listener_.fd(), POLLIN, 0});
    ids.push_back(kPeerListener);
  }
  if (client_.listener().valid()) {
    fds.push_back(pollfd{client_.listener().fd(), POLLIN, 0});
    ids.push_back(kClientListener);
  }
  uint64_t wait = std::min(kTickMs, settings_.keepalive_ms);
  for (auto& [id, c] : conns_) {
    short events = c.connecting || c.read_shut ? 0 : POLLIN;
    if (c.connecting || !c.out.empty()) events |= POLLOUT;
    fds.push_back(pollfd{c.sock.fd(), events, 0});
    ids.push_back(id);
    if (c.deadline != 0) wait = std::min(wait, c.deadline > now ? c.deadline - now : 0);
  }
  io.unlock();
  const int n = ::poll(fds.data(), fds.size(), static_cast<int>(wait));
  io.lock();
  if (n <= 0) return;
  for (std::size_t i = 0; i < fds.size(); ++i) {
    if (fds[i].revents == 0) continue;
    const int id = ids[i];
    if (id == kWake) {
      char buf[64];
      while (::read(wake_fds_[0], buf, sizeof buf) > 0) {}
    } else if (id == kPeerListener) {
      accept_all(peer_listener_, Kind::kInbound);
    } else if (id == kClientListener) {
      accept_all(client_.listener(), Kind::kClient);
    } else {
      if ((fds[i].revents & (POLLOUT | POLLERR | POLLHUP)) != 0) on_writable(id);
      if ((fds[i].revents & (POLLIN | POLLERR | POLLHUP)) != 0) on_readable(id);
    }
  }
}

void Engine::check_client_port() {
  std::vector<const Card*> cards;
  for (const auto& [key, p] : peers_) cards.push_back(&p.card);
  client_.settle(card_, cards);
}

void Engine::run() {
  std::unique_lock io(io_mu_);
  for (;;) {
    const Asked asked = take_asked();
    const uint64_t now = now_ms();
    const uint64_t absent_limit =
        std::max<uint64_t>(1000, settings_.keepalive_ms * settings_.timeout_factor / 2);
    if (last_loop_ != 0 && now - last_loop_ > absent_limit) discount_absence(now - last_loop_, now);
    last_loop_ = now;
    if (asked.port_check) {
      check_client_port();
      {
        std::lock_guard lock(mu_);
        port_checked_ = asked.port_ticket;
      }
      cv_.notify_all();
    }
    if (asked.farewell && say_goodbye(asked.farewell_ticket)) break;
    forget_unreferenced();
    refresh_links(now);
    keep_alive(now);
    timers(now);
    watch_stalls(now);
    close_finished();
    poll_once(io, now);
  }
  cv_.notify_all();
}

}  // namespace nccom::health::engine
