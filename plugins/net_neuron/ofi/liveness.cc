// The liveness channel: TCP listening socket, connect + hello, and the
// rate-limited check of an established pair (see liveness.h).
#include "liveness.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace nccom::ofi {
namespace {

std::atomic<bool> g_enabled{true};
std::atomic<int> g_check_ms{100};
std::atomic<int> g_grace_ms{500};

constexpr int kBacklog = 8;
constexpr size_t kMaxPendingAccepts = 8;  // strays beyond this are dropped, oldest first
constexpr char kGoodbye = 'B';
// A dead host is found by keepalive: first probe after 10 s idle, then every
// 5 s, given up after 3 (≈ 25 s). Process death and closes need none of it.
constexpr int kKeepIdleS = 10;
constexpr int kKeepIntervalS = 5;
constexpr int kKeepCount = 3;

std::string errno_text(int err) {
  char text[160];
  std::snprintf(text, sizeof text, "%s (errno %d)", std::strerror(err), err);
  return text;
}

void set_keepalive(int fd) {
  int on = 1;
  (void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &kKeepIdleS, sizeof kKeepIdleS);
  (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &kKeepIntervalS, sizeof kKeepIntervalS);
  (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &kKeepCount, sizeof kKeepCount);
}

// The address the listening socket binds to, and how the handle names it.
void choose_bind_address(uint32_t addr_format, const std::vector<uint8_t>& ep_addr,
                         sockaddr_storage* out, socklen_t* len, LivenessKind* kind) {
  *out = sockaddr_storage{};
  if (addr_format == FI_SOCKADDR_IN && ep_addr.size() == sizeof(sockaddr_in)) {
    std::memcpy(out, ep_addr.data(), sizeof(sockaddr_in));
    reinterpret_cast<sockaddr_in*>(out)->sin_port = 0;
    *len = sizeof(sockaddr_in);
    *kind = LivenessKind::kFabricSockaddr;
    return;
  }
  if (addr_format == FI_SOCKADDR_IN6 && ep_addr.size() == sizeof(sockaddr_in6)) {
    std::memcpy(out, ep_addr.data(), sizeof(sockaddr_in6));
    reinterpret_cast<sockaddr_in6*>(out)->sin6_port = 0;
    *len = sizeof(sockaddr_in6);
    *kind = LivenessKind::kFabricSockaddr;
    return;
  }
  auto* in = reinterpret_cast<sockaddr_in*>(out);
  in->sin_family = AF_INET;
  in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  *len = sizeof(sockaddr_in);
  *kind = LivenessKind::kIpv4;
  static constexpr char kShmPrefix[] = "fi_shm://";
  const bool shm = addr_format == FI_ADDR_STR && ep_addr.size() >= sizeof kShmPrefix - 1 &&
                   std::memcmp(ep_addr.data(), kShmPrefix, sizeof kShmPrefix - 1) == 0;
  if (shm) return;  // the peer is on this host
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    if ((i->ifa_flags & IFF_UP) == 0 || (i->ifa_flags & IFF_LOOPBACK) != 0) continue;
    in->sin_addr = reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr;
    break;
  }
  freeifaddrs(list);
}

// Where a connector finds the listener's liveness socket; false if the
// handle's fields do not describe one.
bool resolve(const PeerAddress& listener, sockaddr_storage* out, socklen_t* len) {
  *out = sockaddr_storage{};
  const LivenessAddress& l = listener.liveness;
  if (l.kind == static_cast<uint8_t>(LivenessKind::kIpv4)) {
    auto* in = reinterpret_cast<sockaddr_in*>(out);
    in->sin_family = AF_INET;
    in->sin_port = l.port;
    std::memcpy(&in->sin_addr, l.ipv4, sizeof l.ipv4);
    *len = sizeof(sockaddr_in);
    return true;
  }
  if (l.kind != static_cast<uint8_t>(LivenessKind::kFabricSockaddr)) return false;
  sa_family_t family = AF_UNSPEC;
  if (listener.addr.size() >= sizeof family) {
    std::memcpy(&family, listener.addr.data(), sizeof family);
  }
  if (family == AF_INET && listener.addr.size() == sizeof(sockaddr_in)) {
    std::memcpy(out, listener.addr.data(), sizeof(sockaddr_in));
    reinterpret_cast<sockaddr_in*>(out)->sin_port = l.port;
    *len = sizeof(sockaddr_in);
    return true;
  }
  if (family == AF_INET6 && listener.addr.size() == sizeof(sockaddr_in6)) {
    std::memcpy(out, listener.addr.data(), sizeof(sockaddr_in6));
    reinterpret_cast<sockaddr_in6*>(out)->sin6_port = l.port;
    *len = sizeof(sockaddr_in6);
    return true;
  }
  return false;
}

}  // namespace

LivenessConfig liveness_config() {
  return LivenessConfig{g_enabled.load(), g_check_ms.load(), g_grace_ms.load()};
}

Status configure_liveness(int enabled, int check_ms, int grace_ms) {
  if ((enabled != 0 && enabled != 1) || check_ms < 1 || check_ms > 60000 || grace_ms < 0 ||
      grace_ms > 600000) {
    return ncclInvalidArgument;
  }
  g_enabled.store(enabled == 1);
  g_check_ms.store(check_ms);
  g_grace_ms.store(grace_ms);
  return ncclSuccess;
}

int64_t monotonic_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

uint64_t make_nonce() {
  uint64_t nonce = 0;
  if (getrandom(&nonce, sizeof nonce, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof nonce)) {
    nonce = static_cast<uint64_t>(monotonic_ns()) ^ (static_cast<uint64_t>(getpid()) << 40);
  }
  return nonce == 0 ? 1 : nonce;
}

std::string describe_address(const std::vector<uint8_t>& addr) {
  char text[INET6_ADDRSTRLEN + 16] = "";
  sa_family_t family = AF_UNSPEC;
  if (addr.size() >= sizeof family) std::memcpy(&family, addr.data(), sizeof family);
  if (family == AF_INET && addr.size() == sizeof(sockaddr_in)) {
    sockaddr_in in;
    std::memcpy(&in, addr.data(), sizeof in);
    char ip[INET_ADDRSTRLEN] = "";
    inet_ntop(AF_INET, &in.sin_addr, ip, sizeof ip);
    std::snprintf(text, sizeof text, "%s:%u", ip, ntohs(in.sin_port));
    return text;
  }
  if (family == AF_INET6 && addr.size() == sizeof(sockaddr_in6)) {
    sockaddr_in6 in6;
    std::memcpy(&in6, addr.data(), sizeof in6);
    char ip[INET6_ADDRSTRLEN] = "";
    inet_ntop(AF_INET6, &in6.sin6_addr, ip, sizeof ip);
    std::snprintf(text, sizeof text, "[%s]:%u", ip, ntohs(in6.sin6_port));
    return text;
  }
  bool printable = !addr.empty();
  for (uint8_t c : addr) printable = printable && ((c >= 0x20 && c < 0x7f) || c == 0);
  if (printable) return std::string(addr.begin(), addr.end()).c_str();  // stops at a NUL
  std::string hex = "0x";
  for (uint8_t c : addr) {
    std::snprintf(text, sizeof text, "%02x", c);
    hex += text;
  }
  return hex;
}

SocketFd& SocketFd::operator=(SocketFd&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.release();
  }
  return *this;
}

int SocketFd::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

void SocketFd::reset() {
  if (fd_ >= 0) (void)::close(fd_);
  fd_ = -1;
}

Status LivenessListener::open(uint32_t addr_format, const std::vector<uint8_t>& ep_addr,
                              std::unique_ptr<LivenessListener>* out) {
  sockaddr_storage bind_to;
  socklen_t len = 0;
  LivenessKind kind = LivenessKind::kNone;
  choose_bind_address(addr_format, ep_addr, &bind_to, &len, &kind);
  SocketFd fd(socket(bind_to.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid() || bind(fd.get(), reinterpret_cast<sockaddr*>(&bind_to), len) != 0 ||
      ::listen(fd.get(), kBacklog) != 0) {
    OFI_WARN(
        "NET/OFI listen: cannot open the liveness socket on %s: %s; this connection "
        "goes without liveness (a request whose peer vanishes waits for the host's timeout)",
        describe_address(std::vector<uint8_t>(reinterpret_cast<uint8_t*>(&bind_to),
                                              reinterpret_cast<uint8_t*>(&bind_to) + len))
            .c_str(),
        errno_text(errno).c_str());
    return ncclSystemError;
  }
  sockaddr_storage bound{};
  socklen_t bound_len = sizeof bound;
  if (getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &bound_len) != 0) {
    OFI_WARN(
        "NET/OFI listen: getsockname on the liveness socket: %s; this connection goes "
        "without liveness",
        errno_text(errno).c_str());
    return ncclSystemError;
  }
  auto listener = std::unique_ptr<LivenessListener>(new LivenessListener());
  LivenessAddress& a = listener->address_;
  a.kind = static_cast<uint8_t>(kind);
  if (bound.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&bound);
    a.port = in->sin_port;
    std::memcpy(a.ipv4, &in->sin_addr, sizeof a.ipv4);
  } else {
    a.port = reinterpret_cast<const sockaddr_in6*>(&bound)->sin6_port;
  }
  if (kind == LivenessKind::kFabricSockaddr) std::memset(a.ipv4, 0, sizeof a.ipv4);
  listener->fd_ = std::move(fd);
  *out = std::move(listener);
  return ncclSuccess;
}

SocketFd LivenessListener::take(uint32_t listen_id, uint64_t nonce) {
  for (size_t i = 0; i < kMaxPendingAccepts; ++i) {  // the rest waits in the backlog
    SocketFd fd(accept4(fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd.valid()) break;
    if (pending_.size() == kMaxPendingAccepts) pending_.erase(pending_.begin());
    pending_.push_back(Pending{std::move(fd)});
  }
  for (auto it = pending_.begin(); it != pending_.end();) {
    Pending& p = *it;
    const ssize_t n = p.got < kHelloSize
                          ? recv(p.fd.get(), p.hello + p.got, kHelloSize - p.got, MSG_DONTWAIT)
                          : 0;
    if (n > 0) p.got += static_cast<size_t>(n);
    const bool closed = n == 0 && p.got < kHelloSize;
    const bool failed = n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
    if (closed || failed) {
      it = pending_.erase(it);
      continue;
    }
    if (p.got == kHelloSize && hello_matches(p.hello, listen_id, nonce)) {
      SocketFd match = std::move(p.fd);
      pending_.erase(it);
      set_keepalive(match.get());
      return match;
    }
    ++it;
  }
  return SocketFd();
}

void PeerWatch::name(std::string label, std::string peer) {
  label_ = std::move(label);
  peer_ = std::move(peer);
}

Status PeerWatch::start_connect(const PeerAddress& listener, uint64_t nonce) {
  sockaddr_storage target;
  socklen_t len = 0;
  if (!resolve(listener, &target, &len)) {
    OFI_WARN(
        "NET/OFI connect: the handle's liveness address (kind %u) does not fit its fabric "
        "address %s",
        listener.liveness.kind, describe_address(listener.addr).c_str());
    return ncclInvalidArgument;
  }
  SocketFd fd(socket(target.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) {
    OFI_WARN("NET/OFI connect: cannot create the liveness socket: %s", errno_text(errno).c_str());
    return ncclSystemError;
  }
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&target), len) != 0 && errno != EINPROGRESS) {
    OFI_WARN("NET/OFI connect: liveness channel to peer %s: %s", peer_.c_str(),
             errno_text(errno).c_str());
    return ncclRemoteError;
  }
  set_keepalive(fd.get());
  const LivenessConfig config = liveness_config();
  check_ns_ = int64_t{config.check_ms} * 1000000;
  grace_ns_ = int64_t{config.grace_ms} * 1000000;
  hello_ = make_hello(listener.listen_id, nonce);
  hello_sent_ = 0;
  connecting_ = true;
  fd_ = std::move(fd);
  return ncclSuccess;
}

Status PeerWatch::poll_connect(bool* ready) {
  *ready = !connecting_;
  if (!connecting_) return ncclSuccess;
  pollfd p{fd_.get(), POLLOUT, 0};
  if (poll(&p, 1, 0) <= 0) return ncclSuccess;  // still connecting
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(fd_.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  if (err == 0) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(&hello_);
    const ssize_t n =
        send(fd_.get(), bytes + hello_sent_, kHelloSize - hello_sent_, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) hello_sent_ += static_cast<size_t>(n);
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) err = errno;
  }
  if (err != 0) {
    OFI_WARN(
        "NET/OFI connect: liveness channel to peer %s failed: %s (is the listener still "
        "open?)",
        peer_.c_str(), errno_text(err).c_str());
    fd_.reset();
    connecting_ = false;
    return ncclRemoteError;
  }
  connecting_ = hello_sent_ < kHelloSize;
  *ready = !connecting_;
  return ncclSuccess;
}

void PeerWatch::adopt(SocketFd fd) {
  const LivenessConfig config = liveness_config();
  check_ns_ = int64_t{config.check_ms} * 1000000;
  grace_ns_ = int64_t{config.grace_ms} * 1000000;
  fd_ = std::move(fd);
}

bool PeerWatch::peer_lost(int64_t now_ns) {
  if (gone_at_ns_ < 0 && now_ns >= next_check_ns_) {
    next_check_ns_ = now_ns + check_ns_;
    inspect(now_ns);
  }
  return gone_at_ns_ >= 0 && now_ns - gone_at_ns_ >= grace_ns_;
}

void PeerWatch::inspect(int64_t now_ns) {
  pollfd p{fd_.get(), POLLIN | POLLRDHUP, 0};
  if (poll(&p, 1, 0) <= 0 || p.revents == 0) return;
  int err = 0;
  bool eof = (p.revents & POLLRDHUP) != 0;
  if ((p.revents & (POLLERR | POLLHUP)) != 0) {
    socklen_t len = sizeof err;
    (void)getsockopt(fd_.get(), SOL_SOCKET, SO_ERROR, &err, &len);
    eof = true;
  }
  char bytes[16];
  for (int round = 0; round < 4; ++round) {  // bounded: only a goodbye byte is ever sent
    const ssize_t n = recv(fd_.get(), bytes, sizeof bytes, MSG_DONTWAIT);
    if (n > 0) {
      goodbye_seen_ = goodbye_seen_ || std::memchr(bytes, kGoodbye, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) eof = true;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && err == 0) err = errno;
    break;
  }
  if (!eof && err == 0 && !goodbye_seen_) return;
  if (err != 0 && !goodbye_seen_) {
    reason_ = "lost its connection (" + errno_text(err) + ")";
  } else if (goodbye_seen_) {
    reason_ = "closed its comm";
  } else {
    reason_ = "went away without closing its comm (its process ended?)";
  }
  gone_at_ns_ = now_ns;
  OFI_WARN(
      "NET/OFI %s: peer %s %s; requests of this comm that are still pending in %lld ms "
      "fail with ncclRemoteError",
      label_.c_str(), peer_.c_str(), reason_.c_str(), static_cast<long long>(grace_ns_ / 1000000));
}

std::string PeerWatch::what_happened() const { return "peer " + peer_ + " " + reason_; }

void PeerWatch::close_gracefully() {
  if (!fd_.valid()) return;
  if (!connecting_ && gone_at_ns_ < 0) {
    (void)send(fd_.get(), &kGoodbye, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  fd_.reset();
}

}  // namespace nccom::ofi
