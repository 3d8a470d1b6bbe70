// The health service's engine (service.h): the one thread's state and
// steps, split over engine.cc (the loop, connections), engine_io.cc (reading,
// frames, client lines, writing), engine_mesh.cc (links, keep-alives,
// classification) and engine_gather.cc (queries, reports, the stall
// watchdog); the nccom-ras port is a ClientPort (client_port.h). Internal to
// host/health.
#pragma once

#include "bootstrap/socket.h"
#include "health/client_port.h"
#include "health/report.h"
#include "health/service.h"
#include "health/snapshot.h"
#include "health/state.h"
#include "health/wire.h"

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace nccom::health::engine {

using bootstrap::Socket;
using bootstrap::SocketAddress;

constexpr int kNeighbours = 2;           // successors each process links to
constexpr uint64_t kHandshakeMs = 5000;  // an inbound connection's hello
constexpr uint64_t kClientMs = 10000;    // a client's whole session
constexpr std::size_t kClientLineBytes = 256;
constexpr uint64_t kTickMs = 250;  // the longest poll
constexpr uint64_t kGoodbyeWaitMs = 200;
// How long add_comm waits for the client-port check of the processes it
// brought (their cards say which listeners on the port are this job's): when
// it returns, this process's nccom-ras port is settled.
constexpr uint64_t kPortCheckWaitMs = 2000;
constexpr int kMaxUnadmitted = 256;                // inbound connections and clients at once
constexpr std::size_t kMaxUnadmittedBytes = 4096;  // read from one before its hello is admitted
constexpr const char* kServerProtocol = "SERVER PROTOCOL 2\n";

using nccom::health::hex;
using nccom::health::seconds;
std::string upper(std::string s);
std::string host_name();
uint64_t random_key();
bool set_nonblocking(int fd);
// The client port: every process of the host binds it (SO_REUSEPORT).
Result<bootstrap::Socket> listen_shared(const bootstrap::SocketAddress& address);
// A non-blocking connect: the socket, connected or in progress (a refusal
// is an error with status NRT_COLL_PENDING, so callers can tell it apart).
Result<bootstrap::Socket> start_connect(const bootstrap::SocketAddress& to, bool& in_progress);

enum class Kind { kInbound, kLinkIn, kLinkOut, kQueryIn, kQueryOut, kClient };

struct Conn {
  Kind kind = Kind::kInbound;
  Socket sock;
  std::vector<uint8_t> in;
  std::vector<uint8_t> out;
  uint64_t peer = 0;  // process key (links, queries)
  uint64_t deadline = 0;
  uint64_t last_tx = 0;  // a link's last keep-alive queued
  bool connecting = false;
  bool hello_done = false;
  bool closing = false;    // close once `out` is sent
  bool read_shut = false;  // a client that half-closed: its answers still go out
  bool goodbye = false;    // the peer said goodbye
  Hello hello;             // an inbound connection's hello, until admitted
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
  // When its health port first refused us (0: it did not): a second refusal
  // a keep-alive period later makes it dead, unless a kLeft came between.
  uint64_t refused_since = 0;
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
  bool fail = false;     // the probe is for the failure message
  bool recheck = false;  // after the WARN: only a lost member is news
};

struct StallState {
  bool warned = false;
  bool failed = false;
  bool probing = false;
  uint64_t recheck_at = 0;  // after the WARN, the next look for a lost member
  uint64_t started = 0;     // the execution the state is for
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
  // fork(): the thread's state is held still (held between its loop's polls)
  // from before the fork until after it, so a forked child can close the
  // descriptors it inherited without reading state caught half-changed.
  void hold_for_fork() { io_mu_.lock(); }
  void release_after_fork() { io_mu_.unlock(); }
  void abandon();  // in a forked child, held: close every descriptor, run nothing

 private:
  // The I/O thread: one turn takes what other threads asked, runs the
  // timers, and waits for the sockets (at most a tick).
  void run();
  // What the other threads asked of the I/O thread since its last turn.
  struct Asked {
    bool farewell = false;
    bool port_check = false;
    uint64_t farewell_ticket = 0;
    uint64_t port_ticket = 0;
  };
  Asked take_asked();
  void merge_peers();  // mu_ held
  // Goodbye on every link; true when the engine stops with it.
  bool say_goodbye(uint64_t ticket);
  void forget_unreferenced();
  void close_finished();
  // Polls the wake pipe, the listeners and every connection, and handles
  // what is ready.
  void poll_once(std::unique_lock<std::mutex>& io, uint64_t now);
  void wake();
  int add_conn(Conn conn);
  // A connection to `key`'s health port being opened, its hello queued.
  Conn outbound(Kind kind, bootstrap::Socket sock, bool in_progress, uint64_t key, const Peer& peer,
                Purpose purpose) const;
  void close_conn(int id, const std::string& why);
  static void queue(Conn& c, const std::vector<uint8_t>& bytes);
  static void queue_text(Conn& c, const std::string& text);

  void accept_all(const Socket& listener, Kind kind);
  void on_readable(int id);
  // The complete lines (clients) or frames (peers) read so far.
  void consume(int id);
  void on_writable(int id);
  void on_frame(int id, const FrameHeader& h, const uint8_t* payload);
  // on_frame's kinds: the first frame (a hello), a keep-alive, a member's
  // goodbye passed on, a snapshot that answers a query.
  void on_hello(int id, const FrameHeader& h, const uint8_t* payload, uint64_t now);
  void on_keep_alive(const Conn& c, uint64_t now);
  void on_left(int id, const FrameHeader& h, const uint8_t* payload, uint64_t now);
  void on_snapshot(int id, const FrameHeader& h, const uint8_t* payload);
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
  // `key` said goodbye (to us, or to the link `from` names): every other
  // established link hears of it (wire.h, kLeft).
  void pass_on_left(uint64_t key, int from);
  // Its port refused a connection: dead at the second refusal a keep-alive
  // period after the first (a peer that left cleanly may be known so only
  // through a kLeft still on its way).
  void refused(Peer& p, uint64_t key, uint64_t now);
  void timers(uint64_t now);
  // This thread was not scheduled for `gap` ms (its process stopped,
  // swapped out or starved): peers' silences and deadlines are timed from
  // now, and stall clocks restart, so that its own absence blames no one.
  void discount_absence(uint64_t gap, uint64_t now);

  int start_collection(Collection col, const std::vector<uint64_t>& targets);
  void member_done(int col, uint64_t key, Reach reach, const std::string& why,
                   std::optional<ProcessSnapshot> snap);
  void finish_collection(int col);
  JobView job_view(const Collection& col) const;
  ProcessSnapshot own_snapshot() const;
  std::vector<LinkView> link_views(uint64_t now) const;

  void watch_stalls(uint64_t now);
  // Once this process knows its job's cards: no other job's processes share
  // its nccom-ras port (client_port.h).
  void check_client_port();
  std::string rank_label(uint64_t process) const;
  std::string peer_words(const Collection& col, const JobView& job) const;
  std::string lost_member(const Collection& col, const JobView& job) const;

  ServiceSettings settings_;
  Socket peer_listener_;
  ClientPort client_;
  Card card_;
  int wake_fds_[2] = {-1, -1};

  std::mutex io_mu_;       // held by the thread except while it polls (hold_for_fork)
  mutable std::mutex mu_;  // everything below is the thread's, except where noted
  std::condition_variable cv_;
  bool stop_ = false;
  bool dirty_ = false;       // comms changed (guarded by mu_)
  bool port_check_ = false;  // a communicator came: check the client port (guarded by mu_)
  bool farewell_ = false;    // the last comm left: say goodbye (guarded by mu_)
  uint64_t farewell_done_ = 0, farewell_asked_ = 0;   // guarded by mu_
  uint64_t port_checked_ = 0, port_check_asked_ = 0;  // guarded by mu_
  std::vector<std::shared_ptr<CommRecord>> comms_;    // guarded by mu_
  std::multimap<uint64_t, uint64_t> secrets_;         // comm hash -> secret, guarded by mu_
  std::map<uint64_t, Peer> pending_peers_;            // added by add_comm, guarded by mu_
  std::vector<uint64_t> removed_peers_;               // guarded by mu_

  std::map<uint64_t, Peer> peers_;
  std::map<int, Conn> conns_;
  int next_id_ = 1;
  std::map<int, Collection> collections_;
  int next_collection_ = 1;
  std::map<std::pair<const CommRecord*, int>, StallState> stalls_;
  uint64_t burst_since_ = 0;  // when the current burst of lost members began (0: none yet)
  uint64_t last_loop_ = 0;    // when the loop last came round
  uint64_t awake_since_ = 0;  // after an absence: stalls count from here
  std::thread thread_;
};

}  // namespace nccom::health::engine
