#include "bootstrap/peer_mesh.h"

#include "log/log.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace nccom::bootstrap {

struct PeerMesh::Outgoing {
  Socket sock;
};

namespace {

// A receive's context after its cause: "bootstrap recv of 8 bytes (TYPE) from rank 2".
std::string recv_what(std::size_t size, MsgType type, int from) {
  return "bootstrap recv of " + std::to_string(size) + " bytes (" +
         msg_type_name(static_cast<uint32_t>(type)) + ") from rank " + std::to_string(from);
}

std::vector<uint8_t> frame(MsgType type, const void* data, std::size_t size) {
  MessageHeader header;
  header.type = static_cast<uint32_t>(type);
  header.size = size;
  const auto head = header.encode();
  std::vector<uint8_t> buffer(head.size() + size);
  std::memcpy(buffer.data(), head.data(), head.size());
  if (size > 0) std::memcpy(buffer.data() + head.size(), data, size);
  return buffer;
}

// Set while this thread runs a collective operation (all-gather, barrier).
thread_local int t_collective = 0;

struct Collective {
  Collective() { ++t_collective; }
  ~Collective() { --t_collective; }
  Collective(const Collective&) = delete;
  Collective& operator=(const Collective&) = delete;
};

}  // namespace

PeerMesh::PeerMesh(int rank, int nranks, uint64_t secret, Socket listener,
                   std::vector<SocketAddress> addresses, std::chrono::milliseconds timeout)
    : rank_(rank),
      nranks_(nranks),
      secret_(secret),
      listener_(std::move(listener)),
      addresses_(std::move(addresses)),
      timeout_(timeout),
      outgoing_(nranks) {}

PeerMesh::~PeerMesh() = default;

Status PeerMesh::check_peer(int peer, const char* op) const {
  if (peer < 0 || peer >= nranks_) {
    return make_error(NRT_INVALID, std::string("bootstrap ") + op + ": peer rank " +
                                       std::to_string(peer) + " is outside the communicator (0.." +
                                       std::to_string(nranks_ - 1) + ")");
  }
  return {};
}

void PeerMesh::set_setup(bool on, std::chrono::milliseconds bound) {
  std::lock_guard lock(mutex_);
  setup_ = on;
  setup_bound_ = bound;
}

std::string PeerMesh::timeout_message(const char* op, int peer, MsgType type, std::size_t size,
                                      std::chrono::milliseconds bound) const {
  return std::string("bootstrap ") + op + " of " + std::to_string(size) + " bytes (" +
         msg_type_name(static_cast<uint32_t>(type)) + ") " +
         (std::strcmp(op, "send") == 0 ? "to" : "from") + " rank " + std::to_string(peer) + " at " +
         addresses_[peer].to_string() + " timed out after " + std::to_string(bound.count()) +
         " ms (rank " + std::to_string(rank_) + " waited; is rank " + std::to_string(peer) +
         " alive and in the same call?)";
}

Status PeerMesh::ensure_outgoing(int peer, Deadline deadline) {
  if (outgoing_[peer]) return {};
  // Every member listened before it checked in: a refusal means it is gone.
  auto sock = Socket::connect(addresses_[peer], deadline, Socket::Refused::kFinal);
  if (!sock) {
    return make_error(sock.error().status, "bootstrap: rank " + std::to_string(rank_) +
                                               " cannot reach rank " + std::to_string(peer) + ": " +
                                               sock.error().message);
  }
  Hello hello;
  hello.secret = secret_;
  hello.rank = rank_;
  hello.nranks = nranks_;
  const auto bytes = hello.encode();
  Status sent = sock->send_all(bytes.data(), bytes.size(), deadline);
  if (!sent) return sent;
  outgoing_[peer] = std::make_unique<Outgoing>(Outgoing{std::move(sock).value()});
  return {};
}

void PeerMesh::accept_ready() {
  for (;;) {
    const int fd = ::accept4(listener_.fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN (nothing more) or a transient error: poll again later
    incoming_.push_back(
        std::make_unique<InboundConnection>(Socket(fd), [this](const Hello& hello) -> Status {
          if (hello.secret != secret_) {
            return make_error(NRT_INVALID, "wrong secret (not a member of this communicator)");
          }
          if (hello.nranks != nranks_ || hello.rank < 0 || hello.rank >= nranks_) {
            return make_error(NRT_INVALID, "claims rank " + std::to_string(hello.rank) + " of " +
                                               std::to_string(hello.nranks) +
                                               "; this communicator has " +
                                               std::to_string(nranks_) + " ranks");
          }
          return {};
        }));
  }
}

// Reads what one connection has; queues complete messages by (sender, type).
// A connection that misbehaves is closed: before it identified itself it is
// a refused stranger; after, the sender's rank is marked broken so that a
// receive waiting for it fails at once instead of at the timeout.
void PeerMesh::read_ready(InboundConnection& in) {
  std::vector<InboundConnection::Message> messages;
  Status ok = in.read_available(&messages);
  const int sender = in.identified() ? in.hello().rank : -1;
  for (auto& message : messages) {
    if (message.type == static_cast<uint32_t>(MsgType::kGoodbye) && sender >= 0) {
      departed_.insert(sender);
      broken_.erase(sender);
      continue;
    }
    if (message.type == static_cast<uint32_t>(MsgType::kGaveUp) && sender >= 0) {
      const std::size_t n = std::min(message.payload.size(), kGaveUpTextBytes);
      std::string why(reinterpret_cast<const char*>(message.payload.data()), n);
      for (char& c : why) c = (c == '\n' || c == '\r' || c == '\0') ? ' ' : c;
      broken_[sender] =
          "rank " + std::to_string(sender) + " (" + in.from() + ") gave up its setup: " + why;
      continue;
    }
    queue_[{sender, message.type}].push_back(std::move(message.payload));
  }
  if (ok) {
    // A member only closes its connection when its communicator goes away:
    // whatever it sent is queued; anything more from it would never come.
    // After a GOODBYE that is a clean departure, not a break.
    if (in.closed() && sender >= 0 && departed_.count(sender) == 0) {
      broken_.try_emplace(sender, "rank " + std::to_string(sender) + " (" + in.from() +
                                      ") closed its connection: its communicator was freed or "
                                      "its process exited");
    }
    return;
  }
  if (sender < 0) {
    ++refused_;
    NCCOM_WARN("bootstrap: rank %d refused a connection from %s: %s", rank_, in.from().c_str(),
               ok.error().message.c_str());
  } else if (departed_.count(sender) == 0) {
    broken_[sender] = "connection from rank " + std::to_string(sender) + " (" + in.from() +
                      ") failed: " + ok.error().message;
  }
}

Status PeerMesh::pump(Outgoing* writer, const std::vector<uint8_t>* pending, std::size_t* written,
                      Deadline deadline) {
  std::vector<pollfd> fds;
  const std::size_t polled_incoming = incoming_.size();
  fds.push_back({listener_.fd(), POLLIN, 0});
  for (const auto& in : incoming_) fds.push_back({in->fd(), POLLIN, 0});
  const bool writing = writer != nullptr && *written < pending->size();
  if (writing) fds.push_back({writer->sock.fd(), POLLOUT, 0});

  const int ready = ::poll(fds.data(), fds.size(), remaining_ms(deadline));
  if (ready < 0 && errno != EINTR) {
    return make_error(NRT_FAILURE, std::string("bootstrap: poll failed: ") + std::strerror(errno));
  }
  if (ready == 0) return make_error(NRT_TIMEOUT, "timed out");
  if (ready < 0) return {};

  for (std::size_t i = 0; i < polled_incoming; ++i) {
    if (fds[i + 1].revents != 0) read_ready(*incoming_[i]);
  }
  if (fds[0].revents & POLLIN) accept_ready();
  if (writing && fds.back().revents != 0) {
    auto n = writer->sock.send_some(pending->data() + *written, pending->size() - *written);
    if (!n) return n.take_error();
    *written += *n;
  }
  std::erase_if(incoming_, [](const auto& in) { return in->closed(); });
  return {};
}

bool PeerMesh::take_message(int peer, MsgType type, std::vector<uint8_t>* out) {
  auto it = queue_.find({peer, static_cast<uint32_t>(type)});
  if (it == queue_.end() || it->second.empty()) return false;
  *out = std::move(it->second.front());
  it->second.pop_front();
  if (it->second.empty()) queue_.erase(it);
  return true;
}

Status PeerMesh::send(int peer, MsgType type, const void* data, std::size_t size) {
  return exchange(peer, data, size, -1, nullptr, 0, type);
}

Status PeerMesh::recv(int peer, MsgType type, void* data, std::size_t size) {
  return exchange(-1, nullptr, 0, peer, data, size, type);
}

Result<bool> PeerMesh::take_received(int from, MsgType type, void* data, std::size_t size) {
  std::vector<uint8_t> message;
  if (take_message(from, type, &message)) {
    if (message.size() != size) {
      return make_error(NRT_INVALID, "bootstrap: rank " + std::to_string(from) + " sent " +
                                         std::to_string(message.size()) + " bytes (" +
                                         msg_type_name(static_cast<uint32_t>(type)) + "), rank " +
                                         std::to_string(rank_) + " expected " +
                                         std::to_string(size));
    }
    if (size > 0) std::memcpy(data, message.data(), size);
    return true;
  }
  if (departed_.count(from) != 0) {
    return in_context(
        make_error(NRT_FAILURE, departed(from) + " without sending it (do all ranks make the "
                                                 "same calls in the same order?)"),
        recv_what(size, type, from));
  }
  if (auto broken = broken_.find(from); broken != broken_.end())
    return in_context(make_error(NRT_FAILURE, broken->second), recv_what(size, type, from));
  return false;
}

namespace {

std::string send_what(std::size_t size, MsgType type, int to) {
  return "send of " + std::to_string(size) + " bytes (" +
         msg_type_name(static_cast<uint32_t>(type)) + ") to rank " + std::to_string(to);
}

}  // namespace

Status PeerMesh::exchange(int send_to, const void* send_data, std::size_t send_size, int recv_from,
                          void* recv_data, std::size_t recv_size, MsgType type) {
  if (send_to >= 0) {
    if (Status ok = check_peer(send_to, "send"); !ok) return ok;
  }
  if (recv_from >= 0) {
    if (Status ok = check_peer(recv_from, "recv"); !ok) return ok;
  }
  std::lock_guard lock(mutex_);
  const auto bound = setup_ ? std::min(timeout_, setup_bound_) : timeout_;
  const Deadline deadline = Clock::now() + bound;
  // Collective operations are left out: a member that finished its part of
  // one may close legitimately while others still complete theirs.
  const bool fail_fast = setup_ && t_collective == 0;

  std::vector<uint8_t> pending;
  std::size_t written = 0;
  if (send_to >= 0 && departed_.count(send_to) != 0) {
    return make_error(
        NRT_FAILURE, "bootstrap " + send_what(send_size, type, send_to) + ": " + departed(send_to));
  }
  if (send_to >= 0) {
    if (Status ok = ensure_outgoing(send_to, deadline); !ok) return ok;
    pending = frame(type, send_data, send_size);
  }
  bool received = recv_from < 0;
  for (;;) {
    if (!received) {
      Result<bool> got = take_received(recv_from, type, recv_data, recv_size);
      if (!got) return got.take_error();
      received = *got;
    }
    const bool sent = written == pending.size();
    if (received && sent) return {};
    if (fail_fast && !broken_.empty()) {
      const auto& [gone, why] = *broken_.begin();
      const std::string op = send_to < 0 || (recv_from >= 0 && !received)
                                 ? "recv of " + std::to_string(recv_size) + " bytes (" +
                                       msg_type_name(static_cast<uint32_t>(type)) + ") from rank " +
                                       std::to_string(recv_from)
                                 : send_what(send_size, type, send_to);
      return make_error(NRT_FAILURE, "bootstrap " + op + " given up: " + why + " (rank " +
                                         std::to_string(gone) +
                                         " left first, its output says "
                                         "why; the communicator cannot be completed without it)");
    }
    Outgoing* writer = sent ? nullptr : outgoing_[send_to].get();
    Status progressed = pump(writer, &pending, &written, deadline);
    if (progressed) continue;
    if (progressed.error().status == NRT_TIMEOUT) {
      return make_error(NRT_TIMEOUT,
                        !sent ? timeout_message("send", send_to, type, send_size, bound)
                              : timeout_message("recv", recv_from, type, recv_size, bound));
    }
    if (writer == nullptr) return progressed;
    outgoing_[send_to].reset();  // a failed connection is not reused
    return make_error(progressed.error().status, "bootstrap " +
                                                     send_what(send_size, type, send_to) + " at " +
                                                     addresses_[send_to].to_string() +
                                                     " failed: " + progressed.error().message);
  }
}

std::string PeerMesh::departed(int peer) const {
  return "rank " + std::to_string(peer) + " at " + addresses_[peer].to_string() +
         " completed its setup and freed its communicator";
}

void PeerMesh::leave(std::chrono::milliseconds bound) {
  std::lock_guard lock(mutex_);
  const auto goodbye = frame(MsgType::kGoodbye, nullptr, 0);
  for (std::size_t peer = 0; peer < outgoing_.size(); ++peer) {
    if (!outgoing_[peer]) continue;
    Status sent =
        outgoing_[peer]->sock.send_all(goodbye.data(), goodbye.size(), Clock::now() + bound);
    if (!sent) {
      NCCOM_INFO(log::kBootstrap, "bootstrap: rank %d could not say goodbye to rank %zu: %s", rank_,
                 peer, sent.error().message.c_str());
    }
  }
}

void PeerMesh::give_up(const std::string& why, std::chrono::milliseconds bound) {
  std::lock_guard lock(mutex_);
  const std::size_t n = std::min(why.size(), kGaveUpTextBytes);
  const auto gave_up = frame(MsgType::kGaveUp, why.data(), n);
  for (std::size_t peer = 0; peer < outgoing_.size(); ++peer) {
    if (!outgoing_[peer]) continue;
    Status sent =
        outgoing_[peer]->sock.send_all(gave_up.data(), gave_up.size(), Clock::now() + bound);
    if (!sent) {
      NCCOM_INFO(log::kBootstrap, "bootstrap: rank %d could not tell rank %zu why it gave up: %s",
                 rank_, peer, sent.error().message.c_str());
    }
  }
}

Status PeerMesh::all_gather(void* data, std::size_t size_per_rank) {
  Collective collective;
  return bootstrap::all_gather(*this, rank_, nranks_, data, size_per_rank,
                               choose_algorithm(nranks_, size_per_rank));
}

// Dissemination barrier: ceil(log2 n) rounds of one byte.
Status PeerMesh::barrier() {
  Collective collective;
  uint8_t token = 0;
  uint8_t in = 0;
  for (int d = 1; d < nranks_; d *= 2) {
    Status ok = exchange((rank_ + d) % nranks_, &token, 1, (rank_ - d + nranks_) % nranks_, &in, 1,
                         MsgType::kBarrier);
    if (!ok) return ok;
  }
  return {};
}

}  // namespace nccom::bootstrap
