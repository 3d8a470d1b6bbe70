// Tools for the bootstrap fault tests (comm_faults_test.cc): process resource
// counts for leak checks, bounded waits on a condition, a capture of WARN
// lines, a probe that sees what a root has received, raw clients that speak
// (or break) the wire protocol, ranks started one by one on threads, and the
// plumbing of forked rank processes.
#pragma once

#include "bootstrap/join.h"
#include "bootstrap/socket.h"
#include "bootstrap/wire.h"
#include "child_process.h"
#include "comm/communicator.h"
#include "log/log.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>  // struct tcp_info with tcpi_bytes_received
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace nccom_fault {

using namespace std::chrono_literals;
using nccom::bootstrap::Clock;
using nccom::bootstrap::Deadline;
using nccom::bootstrap::MsgType;
using nccom::bootstrap::Socket;
using nccom::bootstrap::SocketAddress;

// ---- Resources -----------------------------------------------------------------

inline int open_fds() { return nccom_test::open_fd_count(); }
inline int live_threads() { return nccom_test::thread_count(); }

// Re-checks `condition` until it holds or `limit` passes. The short poll
// between checks is a back-off, not the synchronisation: the condition is.
inline bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds limit) {
  const Deadline deadline = Clock::now() + limit;
  for (;;) {
    if (condition()) return true;
    if (Clock::now() >= deadline) return false;
    (void)::poll(nullptr, 0, 1);
  }
}

// ---- WARN lines ------------------------------------------------------------------

// Collects every WARN line while alive (the logger's sink is process-wide,
// so one capture at a time).
class WarnCapture {
 public:
  WarnCapture() {
    {
      std::lock_guard lock(state().mutex);
      state().lines.clear();
    }
    nccom::log::set_warn_sink(&WarnCapture::sink);
  }
  ~WarnCapture() { nccom::log::set_warn_sink(nullptr); }
  WarnCapture(const WarnCapture&) = delete;
  WarnCapture& operator=(const WarnCapture&) = delete;

  // Waits for a line containing every one of `parts`.
  bool wait_for(const std::vector<std::string>& parts, std::chrono::milliseconds limit) {
    std::unique_lock lock(state().mutex);
    return state().changed.wait_for(lock, limit, [&] { return find_locked(parts); });
  }
  bool seen(const std::vector<std::string>& parts) {
    std::lock_guard lock(state().mutex);
    return find_locked(parts);
  }

 private:
  struct State {
    std::mutex mutex;
    std::condition_variable changed;
    std::vector<std::string> lines;
  };
  static State& state() {
    static auto* s = new State;  // never destroyed: a late sink call stays safe
    return *s;
  }
  static void sink(const char* line, std::size_t length) {
    {
      std::lock_guard lock(state().mutex);
      state().lines.emplace_back(line, length);
    }
    state().changed.notify_all();
  }
  static bool find_locked(const std::vector<std::string>& parts) {
    for (const auto& line : state().lines) {
      bool all = true;
      for (const auto& p : parts) all = all && line.find(p) != std::string::npos;
      if (all) return true;
    }
    return false;
  }
};

// ---- Sockets -----------------------------------------------------------------------

inline SocketAddress loopback(uint16_t port) {
  SocketAddress a = *SocketAddress::parse("127.0.0.1:1");
  a.set_port(port);
  return a;
}

// A loopback TCP port that is bound but not listening: connecting to it is
// refused, and nobody else can take it while the socket lives. `for_root`:
// bound with SO_REUSEADDR, so that a bootstrap root (which binds with
// SO_REUSEADDR) can still listen on it while it is held.
inline Socket reserved_port(bool for_root = false) {
  Socket s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const SocketAddress any = loopback(0);
  const int one = 1;
  if (!s.valid() ||
      (for_root && ::setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0) ||
      ::bind(s.fd(), any.sa(), any.length()) != 0)
    return Socket();
  return s;
}

// A unique id for a root the test plays (or holds a port for) at `root`.
inline nccom::bootstrap::UniqueId id_at(const SocketAddress& root, uint64_t secret) {
  nccom::bootstrap::UniqueId id;
  id.root = root;
  id.secret = secret;
  return id;
}

// How many TCP connections accepted on local loopback `port` have had at
// least `bytes` bytes delivered by their peer (read by the root or not).
// Asked of the kernel (sock_diag), so the root's own sockets are never
// touched from this thread.
inline int accepted_with_bytes(uint16_t port, uint64_t bytes) {
  Socket nl(::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG));
  if (!nl.valid()) return -1;
  struct {
    nlmsghdr header;
    inet_diag_req_v2 request;
  } query{};
  query.header.nlmsg_len = sizeof query;
  query.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  query.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  query.request.sdiag_family = AF_INET;
  query.request.sdiag_protocol = IPPROTO_TCP;
  query.request.idiag_states = ~(1u << 10);  // every state but LISTEN
  query.request.idiag_ext = 1u << (INET_DIAG_INFO - 1);
  if (::send(nl.fd(), &query, sizeof query, 0) != static_cast<ssize_t>(sizeof query)) return -1;
  int count = 0;
  alignas(nlmsghdr) char buffer[32768];
  for (;;) {
    const ssize_t n = ::recv(nl.fd(), buffer, sizeof buffer, 0);
    if (n <= 0) return -1;
    int left = static_cast<int>(n);
    auto* h = reinterpret_cast<nlmsghdr*>(buffer);
    for (; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
      if (h->nlmsg_type == NLMSG_DONE) return count;
      if (h->nlmsg_type == NLMSG_ERROR) return -1;
      const auto* msg = static_cast<const inet_diag_msg*>(NLMSG_DATA(h));
      if (ntohs(msg->id.idiag_sport) != port) continue;
      if (msg->id.idiag_src[0] != htonl(INADDR_LOOPBACK)) continue;
      int attr_left = static_cast<int>(h->nlmsg_len - NLMSG_LENGTH(sizeof *msg));
      for (auto* a = reinterpret_cast<const rtattr*>(msg + 1); RTA_OK(a, attr_left);
           a = RTA_NEXT(a, attr_left)) {
        if (a->rta_type != INET_DIAG_INFO) continue;
        tcp_info info{};
        std::memcpy(&info, RTA_DATA(a), std::min<std::size_t>(RTA_PAYLOAD(a), sizeof info));
        if (info.tcpi_bytes_received >= bytes) ++count;
      }
    }
  }
}

// A flat rank's check-in as the root receives it: Hello, header, extInfo.
inline constexpr uint64_t kCheckInBytes = nccom::bootstrap::kHelloBytes +
                                          nccom::bootstrap::kHeaderBytes +
                                          nccom::bootstrap::kExtInfoBytes;

// Waits until the root on `port` holds `n` complete check-ins. A client that
// connects after this is read by the root no earlier than those.
inline bool root_has_checkins(uint16_t port, int n, std::chrono::milliseconds limit = 5000ms) {
  return eventually([&] { return accepted_with_bytes(port, kCheckInBytes) >= n; }, limit);
}

// Under the hierarchical protocol a host's leader forwards each check-in as
// one message (header, u32 count 1, extInfo) on its one connection.
inline constexpr uint64_t kLeaderForwardBytes =
    nccom::bootstrap::kHeaderBytes + sizeof(uint32_t) + nccom::bootstrap::kExtInfoBytes;

// Waits until one leader has forwarded `n` check-ins to the root on `port`.
inline bool leader_has_forwarded(uint16_t port, int n, std::chrono::milliseconds limit = 5000ms) {
  const uint64_t bytes = nccom::bootstrap::kHelloBytes + n * kLeaderForwardBytes;
  return eventually([&] { return accepted_with_bytes(port, bytes) >= 1; }, limit);
}

// A hand-driven bootstrap client: queues exactly the bytes a test asks for
// and sends them in one write, so a peer that refuses it after the first
// bytes cannot make the test's own send fail.
class RawClient {
 public:
  explicit RawClient(const SocketAddress& to) {
    auto s = Socket::connect(to, Clock::now() + 2s);
    if (s) sock_ = std::move(s).value();
  }
  bool connected() const { return sock_.valid(); }
  std::string local() const { return sock_.local_address().to_string(); }

  RawClient& bytes(const void* data, std::size_t size) {
    const auto* p = static_cast<const uint8_t*>(data);
    pending_.insert(pending_.end(), p, p + size);
    return *this;
  }
  RawClient& hello(uint64_t secret, int rank, int nranks) {
    nccom::bootstrap::Hello h;
    h.secret = secret;
    h.rank = rank;
    h.nranks = nranks;
    const auto b = h.encode();
    return bytes(b.data(), b.size());
  }
  RawClient& header(MsgType type, uint64_t size) {
    nccom::bootstrap::MessageHeader m;
    m.type = static_cast<uint32_t>(type);
    m.size = size;
    const auto b = m.encode();
    return bytes(b.data(), b.size());
  }
  nccom::Status send() {
    auto sent = sock_.send_all(pending_.data(), pending_.size(), Clock::now() + 2s);
    pending_.clear();
    return sent;
  }
  nccom::Result<std::vector<uint8_t>> reply(MsgType type, std::chrono::milliseconds limit) {
    return nccom::bootstrap::recv_message(sock_, type, 64 + 4096, Clock::now() + limit);
  }
  void close() { sock_.close(); }

 private:
  Socket sock_;
  std::vector<uint8_t> pending_;
};

// ---- Ranks -----------------------------------------------------------------------------

struct RankSpec {
  int rank = 0;
  int nranks = 0;
  ncclUniqueId id{};         // used when root_comm_id is empty
  std::string root_comm_id;  // "host:port" root
  bool global = false;
  nccom::comm::BootstrapSettings settings;
};

struct RankResult {
  int rank = -1;
  nccom::Status status;
  std::unique_ptr<nccom::comm::Communicator> comm;
  std::chrono::milliseconds took{0};
  std::string message() const { return status ? std::string("<success>") : status.error().message; }
};

// Ranks started one at a time, each Communicator::create on its own thread.
class RankThreads {
 public:
  ~RankThreads() { join(); }
  void start(const RankSpec& spec) {
    auto slot = std::make_unique<Slot>();
    slot->spec = spec;
    Slot* s = slot.get();
    slots_.push_back(std::move(slot));
    s->thread = std::thread([s] {
      const auto begin = Clock::now();
      enc_neuron_device_info_t dev{};
      dev.nec_dev_id = s->spec.rank;
      nccom::comm::InitRequest request;
      request.root_comm_id = s->spec.root_comm_id.empty() ? nullptr : s->spec.root_comm_id.c_str();
      request.id = &s->spec.id;
      request.nranks = s->spec.nranks;
      request.rank = s->spec.rank;
      request.device = &dev;
      request.global = s->spec.global;
      auto created = nccom::comm::Communicator::create(request, s->spec.settings);
      s->result.rank = s->spec.rank;
      if (created) {
        s->result.comm = std::move(created).value();
      } else {
        s->result.status = created.take_error();
      }
      s->result.took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - begin);
    });
  }
  // Joins every thread; the results in start order.
  std::vector<RankResult> join() {
    std::vector<RankResult> out;
    for (auto& s : slots_) {
      if (s->thread.joinable()) s->thread.join();
      out.push_back(std::move(s->result));
    }
    slots_.clear();
    return out;
  }

 private:
  struct Slot {
    RankSpec spec;
    RankResult result;
    std::thread thread;
  };
  std::list<std::unique_ptr<Slot>> slots_;
};

// A communicator's bootstrap alone (id, root, handshake, mesh), for the tests
// that need the PeerMesh itself.
struct MeshRank {
  nccom::Status status;
  std::unique_ptr<nccom::bootstrap::PeerMesh> mesh;
};

inline std::vector<MeshRank> join_meshes(const nccom::bootstrap::UniqueId& id, int nranks,
                                         const nccom::comm::BootstrapSettings& settings) {
  std::vector<MeshRank> ranks(nranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < nranks; ++r) {
    threads.emplace_back([&, r] {
      nccom::bootstrap::JoinOptions o;
      o.id = id;
      o.rank = r;
      o.nranks = nranks;
      o.listen_on = settings.interface.address;
      o.socket_timeout = settings.socket_timeout;
      o.handshake_timeout = settings.handshake_timeout;
      auto joined = nccom::bootstrap::join(o);
      if (joined) {
        ranks[r].mesh = std::move(joined->mesh);
      } else {
        ranks[r].status = joined.take_error();
      }
    });
  }
  for (auto& t : threads) t.join();
  return ranks;
}

// ---- Checks ------------------------------------------------------------------------------

// Success when `text` contains every one of `parts`; else names the first missing.
inline ::testing::AssertionResult has(const std::string& text,
                                      const std::vector<std::string>& parts) {
  for (const auto& p : parts) {
    if (text.find(p) == std::string::npos) {
      return ::testing::AssertionFailure() << "\"" << p << "\" missing in: " << text;
    }
  }
  return ::testing::AssertionSuccess();
}

// `size` pseudo-random bytes that never start a valid hello.
inline std::vector<uint8_t> garbage(std::size_t size, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> bytes(size);
  for (auto& b : bytes) b = static_cast<uint8_t>(rng());
  bytes[0] = 0xff;  // never the hello magic by chance
  return bytes;
}

// Every rank all-gathers distinct slices at once; "" when all are exact.
inline std::string gather_exact(const std::vector<nccom::bootstrap::PeerMesh*>& meshes) {
  constexpr std::size_t kSlice = 29;
  const int n = static_cast<int>(meshes.size());
  std::vector<std::string> errors(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      std::vector<uint8_t> data(kSlice * n, 0xee);
      for (std::size_t i = 0; i < kSlice; ++i) {
        data[r * kSlice + i] = static_cast<uint8_t>(r * 13 + i);
      }
      if (auto ok = meshes[r]->all_gather(data.data(), kSlice); !ok) {
        errors[r] = ok.error().message;
        return;
      }
      for (int q = 0; q < n; ++q) {
        for (std::size_t i = 0; i < kSlice; ++i) {
          if (data[q * kSlice + i] != static_cast<uint8_t>(q * 13 + i)) {
            errors[r] = "rank " + std::to_string(r) + ": slice " + std::to_string(q) + " wrong";
            return;
          }
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& e : errors) {
    if (!e.empty()) return e;
  }
  return "";
}

inline std::vector<nccom::bootstrap::PeerMesh*> meshes_of(const std::vector<MeshRank>& ranks) {
  std::vector<nccom::bootstrap::PeerMesh*> out;
  for (const auto& r : ranks) out.push_back(r.mesh.get());
  return out;
}

// ---- Child processes ------------------------------------------------------------------------

// Closes what a forked test opened, and kills and reaps the child, on every path.
struct Child {
  pid_t pid = -1;
  std::vector<int> fds;
  ~Child() {
    for (int fd : fds) ::close(fd);
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
  int wait() {
    int status = 0;
    ::waitpid(pid, &status, 0);
    pid = -1;
    return status;
  }
};

// Reads exactly `size` bytes from a pipe, each wait bounded by `timeout_ms`.
inline bool read_exact(int fd, void* data, std::size_t size, int timeout_ms) {
  auto* p = static_cast<char*>(data);
  while (size > 0) {
    pollfd pfd{fd, POLLIN, 0};
    if (::poll(&pfd, 1, timeout_ms) <= 0) return false;
    const ssize_t n = ::read(fd, p, size);
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace nccom_fault
