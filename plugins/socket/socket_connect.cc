// The connecting side of connection setup: a Connector per connect, kept in
// a registry between the caller's polls (v5/v6) or driven to the end (v4).
#include "socket_config.h"
#include "socket_log.h"
#include "socket_setup.h"

#include <poll.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

namespace nccom::socket {
namespace {

constexpr int kBlockingPollMs = 100;

ncclResult_t decode_handle(const WireHandle& h, SockAddr* out) {
  SockAddr a;
  if (h.marker == kHandleMarker && h.port != 0 && h.family == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(&a.storage);
    in->sin_family = AF_INET;
    in->sin_port = h.port;
    memcpy(&in->sin_addr, h.addr, sizeof in->sin_addr);
    a.len = sizeof *in;
  } else if (h.marker == kHandleMarker && h.port != 0 && h.family == AF_INET6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&a.storage);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = h.port;
    memcpy(&in6->sin6_addr, h.addr, sizeof in6->sin6_addr);
    in6->sin6_scope_id = h.scope_id;
    a.len = sizeof *in6;
  } else {
    SOCK_WARN(
        "connect: the handle is not a socket-plugin listen handle (marker 0x%08x, "
        "family %u, port %u)",
        h.marker, h.family, h.port);
    return ncclInvalidArgument;
  }
  *out = a;
  return ncclSuccess;
}

ncclResult_t classify(int err) {
  return err == ECONNREFUSED || err == ECONNRESET || err == EPIPE || err == EHOSTUNREACH ||
                 err == ENETUNREACH || err == ETIMEDOUT
             ? ncclRemoteError
             : ncclSystemError;
}

class Connector {
 public:
  static ncclResult_t start(const WireHandle& handle, std::unique_ptr<Connector>* out) {
    std::unique_ptr<Connector> c(new Connector());
    if (ncclResult_t rc = decode_handle(handle, &c->peer_); rc != ncclSuccess) return rc;
    SocketConfig config = current_config();
    c->nsocks_per_thread_ = config.nsocks_per_thread;
    c->start_ms_ = now_ms();
    uint64_t conn_id = random_u64();
    int total = 1 + config.nsocks_per_thread * config.nthreads;
    c->socks_.resize(total);
    for (int i = 0; i < total; ++i) {
      Pending& p = c->socks_[i];
      p.hello = Hello{kHelloMarker,
                      static_cast<uint16_t>(i),
                      static_cast<uint16_t>(config.nsocks_per_thread),
                      static_cast<uint16_t>(config.nthreads),
                      0,
                      static_cast<uint16_t>(kEagerCredits),
                      0,
                      handle.magic,
                      conn_id};
      set_hello_eager_max(p.hello, static_cast<uint32_t>(kEagerMaxBytes));
      p.fd = open_tcp_socket(c->peer_.family());
      int rc = p.fd.valid() ? ::connect(p.fd.get(), c->peer_.sa(), c->peer_.len) : -1;
      if (rc != 0 && errno != EINPROGRESS) return c->fail("connect", errno);
      p.connected = rc == 0;
    }
    *out = std::move(c);
    return ncclSuccess;
  }

  // One non-blocking pass; *out is set once every socket sent its hello.
  ncclResult_t step(SendComm** out) {
    *out = nullptr;
    if (now_ms() - start_ms_ > kSetupTimeoutMs) return fail("connect timed out", ETIMEDOUT);
    bool all_sent = true;
    for (Pending& p : socks_) {
      if (p.sent == sizeof p.hello) continue;
      if (!p.connected) {
        pollfd pf{p.fd.get(), POLLOUT, 0};
        if (poll(&pf, 1, 0) <= 0) {
          all_sent = false;
          continue;
        }
        int err = 0;
        socklen_t len = sizeof err;
        if (getsockopt(p.fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
        if (err != 0) return fail("connect", err);
        p.connected = true;
      }
      int err = 0;
      IoStatus st = send_some(p.fd.get(), &p.hello, sizeof p.hello, &p.sent, &err);
      if (st == IoStatus::kError) return fail("sending the hello", err);
      all_sent &= st == IoStatus::kDone;
    }
    if (!all_sent) return ncclSuccess;
    std::vector<Fd> data;
    for (size_t i = 1; i < socks_.size(); ++i) data.push_back(std::move(socks_[i].fd));
    SOCK_TRACE("connected to %s (%zu data sockets)", peer_.str().c_str(), data.size());
    return SendComm::create(std::move(socks_[0].fd), std::move(data), nsocks_per_thread_,
                            peer_.str(), out);
  }

  // Waits (bounded) until some unfinished socket can make progress.
  void wait(int timeout_ms) {
    std::vector<pollfd> fds;
    for (const Pending& p : socks_)
      if (p.sent < sizeof p.hello) fds.push_back(pollfd{p.fd.get(), POLLOUT, 0});
    (void)poll(fds.data(), fds.size(), timeout_ms);
  }

 private:
  struct Pending {
    Fd fd;
    Hello hello{};
    size_t sent = 0;
    bool connected = false;
  };

  Connector() = default;
  ncclResult_t fail(const char* what, int err) {
    SOCK_WARN("%s to %s failed: %s", what, peer_.str().c_str(), strerror(err));
    return classify(err);
  }

  SockAddr peer_;
  int nsocks_per_thread_ = 1;
  int64_t start_ms_ = 0;
  std::vector<Pending> socks_;
};

std::mutex g_connect_mutex;
std::map<uint64_t, std::unique_ptr<Connector>> g_connectors;  // by connect_token

void store_token(void* handle, uint64_t token) {
  memcpy(static_cast<char*>(handle) + offsetof(WireHandle, connect_token), &token, sizeof token);
}

}  // namespace

ncclResult_t connect_nonblocking(void* handle, SendComm** out) {
  WireHandle h;
  memcpy(&h, handle, sizeof h);
  std::lock_guard<std::mutex> lock(g_connect_mutex);
  Connector* c = nullptr;
  uint64_t token = h.connect_token;
  if (h.marker == kHandleMarker && token != 0) {
    auto it = g_connectors.find(token);
    if (it == g_connectors.end()) {
      SOCK_WARN("connect: the handle names no connect in progress (token %016llx)",
                static_cast<unsigned long long>(token));
      return ncclInvalidArgument;
    }
    c = it->second.get();
  } else {
    std::unique_ptr<Connector> fresh;
    if (ncclResult_t rc = Connector::start(h, &fresh); rc != ncclSuccess) return rc;
    do token = random_u64();
    while (token == 0 || g_connectors.count(token) != 0);
    c = fresh.get();
    g_connectors.emplace(token, std::move(fresh));
    store_token(handle, token);
  }
  ncclResult_t rc = c->step(out);
  if (rc != ncclSuccess || *out != nullptr) {
    g_connectors.erase(token);
    store_token(handle, 0);  // the handle can start another connect
  }
  return rc;
}

ncclResult_t connect_blocking(const void* handle, SendComm** out) {
  WireHandle h;
  memcpy(&h, handle, sizeof h);
  std::unique_ptr<Connector> c;
  if (ncclResult_t rc = Connector::start(h, &c); rc != ncclSuccess) return rc;
  for (;;) {
    if (ncclResult_t rc = c->step(out); rc != ncclSuccess || *out != nullptr) return rc;
    c->wait(kBlockingPollMs);
  }
}

void connectors_fini() {
  std::lock_guard<std::mutex> lock(g_connect_mutex);
  g_connectors.clear();
}

}  // namespace nccom::socket
