// The listening side of connection setup: ListenComm.
#include "socket_config.h"
#include "socket_devices.h"
#include "socket_log.h"
#include "socket_setup.h"

#include <netinet/tcp.h>
#include <poll.h>

#include <cerrno>
#include <cstring>

namespace nccom::socket {
namespace {

constexpr int kBlockingPollMs = 5;

void set_port_zero(SockAddr& a) {
  if (a.family() == AF_INET)
    reinterpret_cast<sockaddr_in*>(&a.storage)->sin_port = 0;
  else
    reinterpret_cast<sockaddr_in6*>(&a.storage)->sin6_port = 0;
}

WireHandle encode_handle(const SockAddr& a, uint64_t magic) {
  WireHandle h{};
  h.marker = kHandleMarker;
  h.family = static_cast<uint16_t>(a.family());
  h.magic = magic;
  if (a.family() == AF_INET) {
    auto* in = reinterpret_cast<const sockaddr_in*>(&a.storage);
    h.port = in->sin_port;
    memcpy(h.addr, &in->sin_addr, sizeof in->sin_addr);
  } else {
    auto* in6 = reinterpret_cast<const sockaddr_in6*>(&a.storage);
    h.port = in6->sin6_port;
    memcpy(h.addr, &in6->sin6_addr, sizeof in6->sin6_addr);
    h.scope_id = in6->sin6_scope_id;
  }
  return h;
}

std::string peer_name(int fd) {
  SockAddr a;
  a.len = sizeof a.storage;
  if (getpeername(fd, a.sa(), &a.len) != 0) return "?";
  return a.str();
}

}  // namespace

ListenComm* ListenComm::from_handle(void* handle) {
  auto* l = static_cast<ListenComm*>(handle);
  return l != nullptr && l->marker_ == kListenCommMarker ? l : nullptr;
}

ncclResult_t ListenComm::create(int dev, void* handle, ListenComm** out) {
  Device d;
  if (!device_get(dev, &d)) {
    SOCK_WARN("listen: no device %d", dev);
    return ncclInvalidArgument;
  }
  std::unique_ptr<ListenComm> l(new ListenComm());
  l->fd_ = open_tcp_socket(d.addr.family());
  SockAddr a = d.addr;
  set_port_zero(a);
  if (!l->fd_.valid() || bind(l->fd_.get(), a.sa(), a.len) != 0 ||
      ::listen(l->fd_.get(), SOMAXCONN) != 0 || getsockname(l->fd_.get(), a.sa(), &a.len) != 0) {
    SOCK_WARN("listen on %s (%s) failed: %s", d.name.c_str(), a.str().c_str(), strerror(errno));
    return ncclSystemError;
  }
  l->magic_ = random_u64();
  l->addr_ = a.str();
  WireHandle h = encode_handle(a, l->magic_);
  memcpy(handle, &h, sizeof h);
  SOCK_TRACE("listening on %s (%s)", l->addr_.c_str(), d.name.c_str());
  *out = l.release();
  return ncclSuccess;
}

void ListenComm::accept_new_sockets() {
  for (;;) {
    int fd = accept4(fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK)
        SOCK_WARN("accept on %s failed: %s", addr_.c_str(), strerror(errno));
      return;  // a failing accept leaves the connection in the backlog; retried next call
    }
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    Incoming in;
    in.fd.reset(fd);
    in.since_ms = now_ms();
    incoming_.push_back(std::move(in));
  }
}

// A complete hello: the socket joins its connection's group, or is closed.
void ListenComm::file(Incoming& in) {
  const Hello& h = in.hello;
  if (h.marker != kHelloMarker || h.magic != magic_) {
    SOCK_WARN("connection from %s to %s did not present this listener's magic; closed",
              peer_name(in.fd.get()).c_str(), addr_.c_str());
    return;
  }
  int total = h.nsocks_per_thread * h.nthreads;
  if (!socket_counts_valid(h.nsocks_per_thread, h.nthreads) || h.index > total) {
    SOCK_WARN("connection from %s: bad socket counts (%u x %u, index %u); closed",
              peer_name(in.fd.get()).c_str(), h.nsocks_per_thread, h.nthreads, h.index);
    return;
  }
  Group& g = groups_[h.conn_id];
  if (g.fds.empty()) {
    g.fds.resize(1 + total);
    g.nsocks_per_thread = h.nsocks_per_thread;
    g.nthreads = h.nthreads;
    g.since_ms = in.since_ms;
  }
  if (g.nsocks_per_thread != h.nsocks_per_thread || g.nthreads != h.nthreads ||
      g.fds[h.index].valid()) {
    SOCK_WARN("connection from %s: socket %u does not fit its connection; closed",
              peer_name(in.fd.get()).c_str(), h.index);
    return;
  }
  if (h.index == 0) g.eager = EagerOffer{hello_eager_max(h), h.eager_credits};
  g.fds[h.index] = std::move(in.fd);
  ++g.arrived;
}

void ListenComm::read_hellos() {
  for (auto it = incoming_.begin(); it != incoming_.end();) {
    int err = 0;
    IoStatus st = recv_some(it->fd.get(), &it->hello, sizeof it->hello, &it->got, &err);
    if (st == IoStatus::kAgain) {
      ++it;
      continue;
    }
    if (st == IoStatus::kDone)
      file(*it);
    else
      SOCK_TRACE("incoming socket on %s closed before its hello", addr_.c_str());
    it = incoming_.erase(it);
  }
}

void ListenComm::expire_stale() {
  int64_t now = now_ms();
  std::erase_if(incoming_, [&](const Incoming& in) {
    bool stale = now - in.since_ms > kSetupTimeoutMs;
    if (stale) SOCK_WARN("incoming socket on %s sent no hello in time; closed", addr_.c_str());
    return stale;
  });
  std::erase_if(groups_, [&](const auto& entry) {
    const Group& g = entry.second;
    bool stale = now - g.since_ms > kSetupTimeoutMs;
    if (stale)
      SOCK_WARN("connection on %s: only %zu of %zu sockets arrived in %lld ms; dropped",
                addr_.c_str(), g.arrived, g.fds.size(), static_cast<long long>(kSetupTimeoutMs));
    return stale;
  });
}

ncclResult_t ListenComm::take_complete_group(RecvComm** out) {
  for (auto it = groups_.begin(); it != groups_.end(); ++it) {
    Group& g = it->second;
    if (g.arrived != g.fds.size()) continue;
    Fd ctrl = std::move(g.fds[0]);
    std::vector<Fd> data;
    for (size_t i = 1; i < g.fds.size(); ++i) data.push_back(std::move(g.fds[i]));
    int nspt = g.nsocks_per_thread;
    EagerOffer eager = g.eager;
    groups_.erase(it);
    std::string peer = peer_name(ctrl.get());
    SOCK_TRACE("accepted a connection from %s on %s (%zu data sockets)", peer.c_str(),
               addr_.c_str(), data.size());
    return RecvComm::create(std::move(ctrl), std::move(data), nspt, std::move(peer), eager, out);
  }
  return ncclSuccess;
}

ncclResult_t ListenComm::accept(RecvComm** out) {
  std::lock_guard<std::mutex> lock(mutex_);
  *out = nullptr;
  accept_new_sockets();
  read_hellos();
  expire_stale();
  return take_complete_group(out);
}

ncclResult_t ListenComm::accept_blocking(RecvComm** out) {
  int64_t deadline = now_ms() + kSetupTimeoutMs;
  for (;;) {
    if (ncclResult_t rc = accept(out); rc != ncclSuccess || *out != nullptr) return rc;
    if (now_ms() > deadline) {
      SOCK_WARN("accept on %s: no connection within %lld ms", addr_.c_str(),
                static_cast<long long>(kSetupTimeoutMs));
      return ncclSystemError;
    }
    pollfd p{fd_.get(), POLLIN, 0};
    (void)poll(&p, 1, kBlockingPollMs);
  }
}

}  // namespace nccom::socket
