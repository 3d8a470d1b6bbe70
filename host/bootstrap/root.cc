#include "bootstrap/root.h"

#include "bootstrap/inbound.h"
#include "bootstrap/join.h"
#include "bootstrap/wire.h"
#include "log/guarded.h"
#include "log/log.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <optional>
#include <random>

namespace nccom::bootstrap {
namespace {

enum class Kind { kUnknown, kFlat, kLeader };

struct Peer {
  std::unique_ptr<InboundConnection> conn;
  Kind kind = Kind::kUnknown;
  std::vector<int> ranks;  // the ranks this connection checked in
};

std::string hex(const std::array<uint8_t, kBuildTagBytes>& tag) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (uint8_t b : tag) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

bool zero(const std::array<uint8_t, kBuildTagBytes>& tag) {
  for (uint8_t b : tag) {
    if (b != 0) return false;
  }
  return true;
}

// The handshake state of one communicator, fed message by message.
class CheckIns {
 public:
  explicit CheckIns(int nranks) : infos_(nranks), from_(nranks) {}

  bool complete() const { return count_ == static_cast<int>(infos_.size()); }
  const std::string& failure() const { return failure_; }
  const ExtInfo& info(int rank) const { return *infos_[rank]; }

  void add(const ExtInfo& info, const std::string& from, Kind kind) {
    const int n = static_cast<int>(infos_.size());
    if (!failure_.empty()) return;
    if (info.nranks != n) {
      fail("rank " + std::to_string(info.rank) + " (" + from + ") was started for " +
           std::to_string(info.nranks) + " ranks, the root for " + std::to_string(n) +
           ": every rank must be given the same rank count");
    } else if (infos_[info.rank]) {
      fail("rank " + std::to_string(info.rank) + " checked in twice (first " + from_[info.rank] +
           "; then " + from + "): every rank needs a distinct rank number");
    } else if (!zero(info.build_tag) && !zero(tag_) && info.build_tag != tag_) {
      fail("rank " + std::to_string(info.rank) + " (" + from + ") runs build " +
           hex(info.build_tag) + " (libnccom|libnrt), rank " + std::to_string(tag_rank_) +
           " runs " + hex(tag_) + ": all ranks must run the same libnccom and libnrt builds");
    } else if (kind_ != Kind::kUnknown && kind != kind_) {
      fail("rank " + std::to_string(info.rank) + " (" + from + ") uses the " +
           (kind == Kind::kFlat ? "flat" : "hierarchical") + " bootstrap protocol, others the " +
           (kind_ == Kind::kFlat ? "flat" : "hierarchical") +
           " one: set bootstrap.protocol alike on every rank");
    } else {
      if (!zero(info.build_tag) && zero(tag_)) {
        tag_ = info.build_tag;
        tag_rank_ = info.rank;
      }
      kind_ = kind;
      infos_[info.rank] = info;
      from_[info.rank] = from;
      ++count_;
    }
  }

  void fail(std::string why) {
    if (failure_.empty()) failure_ = std::move(why);
  }

  std::string missing() const {
    std::string list;
    int shown = 0;
    int missing = 0;
    for (std::size_t r = 0; r < infos_.size(); ++r) {
      if (infos_[r]) continue;
      ++missing;
      if (shown++ < 16) list += (list.empty() ? "" : ", ") + std::to_string(r);
    }
    if (shown > 16) list += ", ...";
    return std::to_string(missing) + " of " + std::to_string(infos_.size()) + " ranks (" + list +
           ")";
  }

 private:
  std::vector<std::optional<ExtInfo>> infos_;
  std::vector<std::string> from_;
  int count_ = 0;
  Kind kind_ = Kind::kUnknown;
  std::array<uint8_t, kBuildTagBytes> tag_{};
  int tag_rank_ = -1;
  std::string failure_;
};

uint64_t random_u64() {
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

}  // namespace

Root::Root(Socket listener, const RootOptions& options)
    : listener_(std::move(listener)), address_(listener_.local_address()), options_(options) {
  if (::pipe2(stop_fds_, O_CLOEXEC | O_NONBLOCK) != 0) stop_fds_[0] = stop_fds_[1] = -1;
}

Result<std::unique_ptr<Root>> Root::start(Socket listener, const RootOptions& options) {
  if (options.nranks < 1) {
    return make_error(NRT_INVALID, "bootstrap root: rank count " + std::to_string(options.nranks) +
                                       " is not positive");
  }
  std::unique_ptr<Root> root(new Root(std::move(listener), options));
  root->thread_ = std::thread([r = root.get()] {
    if (log::run_thread_body("bootstrap root", "the communicator's ranks are told nothing",
                             [r] { r->serve(); })) {
      r->exited_.store(true, std::memory_order_release);
      return;
    }
    r->outcome_ = make_error(NRT_RESOURCE, "bootstrap root " + r->address_.to_string() +
                                               ": its thread stopped (out of memory?)");
    r->listener_.close();
    {
      std::lock_guard lock(r->done_mutex_);
      r->done_.store(true, std::memory_order_release);
    }
    r->done_cv_.notify_all();
    r->exited_.store(true, std::memory_order_release);
  });
  return root;
}

Root::~Root() {
  (void)wait();
  for (int fd : stop_fds_) {
    if (fd >= 0) ::close(fd);
  }
}

Status Root::wait() {
  if (thread_.joinable()) thread_.join();
  return outcome_;
}

bool Root::stop_if_decided() {
  if (!decided()) return false;
  if (stop_fds_[1] >= 0) {
    const char c = 1;
    [[maybe_unused]] const ssize_t n = ::write(stop_fds_[1], &c, 1);
  }
  (void)wait();
  return true;
}

namespace {

// Strangers refused while the root waited: named in a timeout verdict, since
// a rank with the wrong secret is one of the missing.
struct Refusals {
  int count = 0;
  std::string first;

  void note(const InboundConnection& conn, const std::string& why) {
    if (count++ > 0) return;
    first = "from " + conn.from() +
            (conn.refused_hello() ? " (claiming rank " + std::to_string(conn.hello().rank) + ")"
                                  : std::string()) +
            ": " + why;
  }
  std::string summary() const {
    if (count == 0) return {};
    return "; the root refused " + std::to_string(count) + " connection" + (count == 1 ? "" : "s") +
           " meanwhile, the first " + first;
  }
};

// One message of a peer: its check-ins (one flat rank, or a leader's batch)
// recorded, or why the message is refused.
Status take_message(const InboundConnection::Message& m, int n, Peer& peer, CheckIns& checkins) {
  const Kind kind = m.type == static_cast<uint32_t>(MsgType::kInfoToRoot)     ? Kind::kFlat
                    : m.type == static_cast<uint32_t>(MsgType::kLeaderToRoot) ? Kind::kLeader
                                                                              : Kind::kUnknown;
  std::vector<ExtInfo> infos;
  Status ok;
  if (kind == Kind::kFlat) {
    auto info = ExtInfo::decode(m.payload.data(), m.payload.size());
    if (info)
      infos.push_back(*info);
    else
      ok = info.take_error();
  } else if (kind == Kind::kLeader) {
    auto batch = LeaderCheckIn::decode(m.payload.data(), m.payload.size(), n);
    if (batch)
      infos = batch->members;
    else
      ok = batch.take_error();
  } else {
    ok = make_error(NRT_INVALID, std::string("unexpected message ") + msg_type_name(m.type));
  }
  for (const ExtInfo& info : infos) {
    // Where the rank is: its own listener (distinct per process), and the
    // connection it came by (a leader's carries all its host's ranks).
    const std::string from =
        kind == Kind::kLeader
            ? "listening at " + info.listen_address.to_string() + ", via the leader at " +
                  peer.conn->from()
            : "from " + peer.conn->from() + ", listening at " + info.listen_address.to_string();
    checkins.add(info, from, kind);
    peer.ranks.push_back(info.rank);
  }
  if (kind != Kind::kUnknown) peer.kind = kind;
  return ok;
}

// Reads what a readable peer sent. A stranger that fails is refused (and
// counted); a member that fails or hangs up fails the whole communicator.
void serve_peer(Peer& peer, int n, CheckIns& checkins, Refusals& refusals,
                const std::string& where) {
  std::vector<InboundConnection::Message> messages;
  Status ok = peer.conn->read_available(&messages);
  for (const auto& m : messages) {
    Status taken = take_message(m, n, peer, checkins);
    if (!taken) ok = std::move(taken);
  }
  // A connection that presented the secret is a member even before its
  // first check-in is complete: if it breaks, that rank is lost.
  const bool member = !peer.ranks.empty() || peer.conn->identified();
  const int rank = !peer.ranks.empty() ? peer.ranks.front() : peer.conn->hello().rank;
  if (!ok) {
    if (!member) {
      NCCOM_WARN("%s refused a connection from %s: %s", where.c_str(), peer.conn->from().c_str(),
                 ok.error().message.c_str());
      refusals.note(*peer.conn, ok.error().message);
    } else {
      checkins.fail("the connection of rank " + std::to_string(rank) + " (" + peer.conn->from() +
                    ") failed before the handshake finished: " + ok.error().message);
    }
    peer.conn->close();
  } else if (peer.conn->closed() && member) {
    checkins.fail("rank " + std::to_string(rank) + " (" + peer.conn->from() +
                  ") hung up before the handshake finished (did the process die?)");
  }
}

// Takes every pending connection. A rank refused at its Hello is told why, so
// that it fails with the root's reason instead of a closed connection.
void accept_peers(const Socket& listener, const InboundConnection::HelloValidator& validator,
                  std::vector<Peer>& peers) {
  for (;;) {
    const int fd = ::accept4(listener.fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    peers.push_back(
        Peer{.conn = std::make_unique<InboundConnection>(Socket(fd), validator), .ranks = {}});
    peers.back().conn->tell_refusals();
  }
}

// The root's answer to one peer: success (the cluster id, epoch and the
// addresses it needs) or the one failure text.
std::vector<uint8_t> reply_for(const Peer& peer, const CheckIns& checkins, int n,
                               uint64_t cluster_id, int64_t epoch, MsgType* type) {
  const bool success = checkins.failure().empty();
  if (peer.kind == Kind::kLeader) {
    LeaderReply reply;
    reply.status = success ? 0 : 1;
    reply.error = success ? "" : checkins.failure();
    reply.cluster_id = cluster_id;
    reply.epoch = epoch;
    if (success) {
      for (int r = 0; r < n; ++r) reply.addresses.push_back(checkins.info(r).listen_address);
    }
    *type = MsgType::kRootToLeader;
    return reply.encode();
  }
  RootReply reply;
  reply.status = success ? 0 : 1;
  reply.error = success ? "" : checkins.failure();
  reply.cluster_id = cluster_id;
  reply.epoch = epoch;
  if (success) reply.successor = checkins.info((peer.ranks.front() + 1) % n).listen_address;
  *type = MsgType::kInfoFromRoot;
  return reply.encode();
}

// How long a late rank's answer may take to send (it is small; a rank that
// does not read it is not waited for).
constexpr std::chrono::milliseconds kLateReplyBound{1000};

// After a failure verdict the root keeps its port until `deadline`: a rank
// that checks in late (restarted, slow to start, or one a leader brings
// after the verdict) is answered with the verdict instead of finding nobody
// and retrying its connect until its own timeout, blaming the root. Ends
// early once every rank has been told, or when a byte arrives on `stop_fd`.
void linger(const Socket& listener, int stop_fd, const InboundConnection::HelloValidator& validator,
            int n, CheckIns& checkins, Deadline deadline, std::vector<bool> told,
            const std::string& where) {
  std::vector<Peer> peers;
  Refusals ignored;
  auto everyone_told = [&] { return std::find(told.begin(), told.end(), false) == told.end(); };
  while (!everyone_told()) {
    std::vector<pollfd> fds{{listener.fd(), POLLIN, 0}, {stop_fd, POLLIN, 0}};
    for (auto& p : peers) fds.push_back({p.conn->fd(), POLLIN, 0});
    const int left = remaining_ms(deadline);
    if (left <= 0) return;
    const int ready = ::poll(fds.data(), fds.size(), left);
    if (ready < 0) continue;  // EINTR
    if (fds[1].revents != 0) return;
    for (std::size_t i = 0; i < peers.size(); ++i) {
      if (fds[i + 2].revents == 0) continue;
      Peer& peer = peers[i];
      serve_peer(peer, n, checkins, ignored, where);
      if (peer.ranks.empty() || peer.conn->closed()) continue;
      MsgType type{};
      const std::vector<uint8_t> payload = reply_for(peer, checkins, n, 0, 0, &type);
      Status sent =
          send_message(peer.conn->socket(), type, payload, Clock::now() + kLateReplyBound);
      for (int r : peer.ranks) {
        if (r >= 0 && r < n) told[static_cast<std::size_t>(r)] = true;
      }
      std::string ranks;
      for (int r : peer.ranks) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
      const std::string failed = sent ? std::string() : ": " + sent.error().message;
      NCCOM_INFO(log::kBootstrap, "%s told rank%s %s, checked in after the verdict, the verdict%s",
                 where.c_str(), peer.ranks.size() == 1 ? "" : "s", ranks.c_str(), failed.c_str());
      peer.conn->close();
    }
    std::erase_if(peers, [](const Peer& p) { return p.conn->closed(); });
    if (fds[0].revents & POLLIN) accept_peers(listener, validator, peers);
  }
}

}  // namespace

void Root::serve() {
  const Deadline deadline = Clock::now() + options_.timeout;
  const int n = options_.nranks;
  const std::string where = "bootstrap root " + address_.to_string();
  CheckIns checkins(n);
  std::vector<Peer> peers;
  Refusals refusals;

  // Only the secret decides membership. A member with another rank count is
  // let through so that its check-in fails the whole communicator with the
  // rank-count message (CheckIns::add) instead of timing the others out.
  const InboundConnection::HelloValidator validator = [this](const Hello& hello) -> Status {
    if (hello.secret != options_.secret) {
      return make_error(NRT_INVALID,
                        "wrong secret: the rank's bootstrap secret is not the root's (set "
                        "bootstrap.secret / NCCOM_BOOTSTRAP_SECRET alike on every rank, and check "
                        "that the root address names this job's rank 0)");
    }
    return {};
  };

  while (!checkins.complete() && checkins.failure().empty()) {
    std::vector<pollfd> fds{{listener_.fd(), POLLIN, 0}};
    for (auto& p : peers) fds.push_back({p.conn->fd(), POLLIN, 0});
    const int left = remaining_ms(deadline);
    const int ready = left > 0 ? ::poll(fds.data(), fds.size(), left) : 0;
    if (ready == 0) {
      checkins.fail(checkins.missing() + " did not check in within " +
                    std::to_string(options_.timeout.count()) + " ms" + refusals.summary());
      break;
    }
    if (ready < 0) continue;  // EINTR
    for (std::size_t i = 0; i < peers.size(); ++i) {
      if (fds[i + 1].revents != 0) serve_peer(peers[i], n, checkins, refusals, where);
    }
    std::erase_if(peers, [](const Peer& p) { return p.conn->closed(); });
    if (fds[0].revents & POLLIN) accept_peers(listener_, validator, peers);
  }

  // Answer everybody who checked in: success or the one failure text.
  const bool success = checkins.failure().empty();
  const uint64_t cluster_id = success ? random_u64() : 0;
  const int64_t epoch = success ? static_cast<int64_t>(std::time(nullptr)) : 0;
  const Deadline reply_deadline = Clock::now() + options_.timeout;
  for (Peer& peer : peers) {
    if (peer.ranks.empty()) continue;
    MsgType type{};
    const std::vector<uint8_t> payload = reply_for(peer, checkins, n, cluster_id, epoch, &type);
    Status sent = send_message(peer.conn->socket(), type, payload, reply_deadline);
    if (!sent) {
      NCCOM_WARN("%s could not answer %s: %s", where.c_str(), peer.conn->from().c_str(),
                 sent.error().message.c_str());
    }
  }
  if (!success) {
    NCCOM_WARN("%s: %s", where.c_str(), checkins.failure().c_str());
    outcome_ = make_error(NRT_FAILURE, where + ": " + checkins.failure());
  }
  std::vector<bool> told(static_cast<std::size_t>(n), false);
  for (const Peer& peer : peers) {
    for (int r : peer.ranks) {
      if (r >= 0 && r < n) told[static_cast<std::size_t>(r)] = true;
    }
  }
  peers.clear();
  {
    std::lock_guard lock(done_mutex_);
    if (success) listener_.close();
    done_.store(true, std::memory_order_release);
  }
  done_cv_.notify_all();
  if (success) return;
  linger(listener_, stop_fds_[0], validator, n, checkins, deadline, std::move(told), where);
  listener_.close();
}

bool Root::wait_for(std::chrono::milliseconds limit) {
  std::unique_lock lock(done_mutex_);
  return done_cv_.wait_for(lock, limit, [this] { return decided(); });
}

}  // namespace nccom::bootstrap
