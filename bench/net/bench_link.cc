#include "bench_link.h"

#include <nccom/net_config.h>

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>

namespace nccom::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kSetupLimit = std::chrono::seconds(60);

// Plugin warnings go to stderr; everything else is dropped (it would
// disturb the timings).
void logger(ncclDebugLogLevel level, unsigned long, const char*, int, const char* fmt, ...) {
  if (level != NCCL_LOG_WARN || fmt == nullptr) return;
  va_list args;
  va_start(args, fmt);
  std::fprintf(stderr, "plugin: ");
  std::vfprintf(stderr, fmt, args);
  std::fprintf(stderr, "\n");
  va_end(args);
}

std::runtime_error failure(const std::string& what) { return std::runtime_error(what); }

}  // namespace

void Link::check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw failure(std::string(what) + " returned " + std::to_string(r));
}

Link::Link(const LinkOptions& o) : oob_(o.oob_fd) {
  library_ = dlopen(o.plugin.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library_ == nullptr) throw failure(std::string("dlopen: ") + dlerror());
  net_ = static_cast<const ncclNet_v6_t*>(dlsym(library_, NCCL_NET_PLUGIN_SYMBOL_V6));
  if (net_ == nullptr) throw failure(o.plugin + " exports no " NCCL_NET_PLUGIN_SYMBOL_V6);
  plugin_name_ = net_->name != nullptr ? net_->name : "?";
  // The socket plugin reads no environment: its configure (nccomNetConfig)
  // keeps it on the loopback with the stream counts asked for.
  if (const auto* config =
          static_cast<const nccom_net_config_t*>(dlsym(library_, NCCOM_NET_CONFIG_SYMBOL));
      config != nullptr && config->configure != nullptr) {
    struct Answers {
      std::map<std::string, std::string> values;
      static const char* get(void* ctx, const char* key) {
        const auto& v = static_cast<Answers*>(ctx)->values;
        auto it = v.find(key);
        return it == v.end() ? nullptr : it->second.c_str();
      }
    } answers;
    if (o.nsocks_per_thread != 0)
      answers.values["nsocks_per_thread"] = std::to_string(o.nsocks_per_thread);
    if (o.nthreads != 0) answers.values["nthreads"] = std::to_string(o.nthreads);
    answers.values["bootstrap.socket_ifname"] = o.device;
    nccom_host_api_t host{};
    host.struct_size = sizeof host;
    host.abi_version = NCCOM_PLUGIN_ABI_VERSION;
    host.config_get = &Answers::get;
    host.host_ctx = &answers;
    char why[512] = {};
    if (config->configure(&host, why, sizeof why) != NCCOM_PLUGIN_OK)
      throw failure(std::string("configure refused: ") + why);
  }
  check(net_->init(logger), "init");
  int ndev = 0;
  check(net_->devices(&ndev), "devices");
  if (ndev < 1) throw failure("no device");
  for (int d = 0; d < ndev; ++d) {
    ncclNetProperties_v6_t props{};
    check(net_->getProperties(d, &props), "getProperties");
    if (d == 0 || (props.name != nullptr && o.device == props.name)) {
      dev_ = d;
      device_name_ = props.name != nullptr ? props.name : "?";
    }
  }
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  char peer_handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  check(net_->listen(dev_, handle, &listen_), "listen");
  oob_send(handle, sizeof handle);
  oob_recv(peer_handle, sizeof peer_handle);
  const auto deadline = Clock::now() + kSetupLimit;
  while (send_ == nullptr || recv_ == nullptr) {
    if (Clock::now() > deadline) throw failure("connect/accept did not finish in 60 s");
    if (send_ == nullptr) check(net_->connect(dev_, peer_handle, &send_), "connect");
    if (recv_ == nullptr) check(net_->accept(listen_, &recv_), "accept");
  }
  send_buf_.assign(o.buffer_bytes, 's');
  recv_buf_.assign(o.buffer_bytes, 'r');
  check(net_->regMr(send_, send_buf_.data(), send_buf_.size(), NCCL_PTR_HOST, &send_mr_),
        "regMr(send)");
  check(net_->regMr(recv_, recv_buf_.data(), recv_buf_.size(), NCCL_PTR_HOST, &recv_mr_),
        "regMr(recv)");
}

Link::~Link() {
  if (net_ == nullptr) return;
  if (send_mr_ != nullptr) net_->deregMr(send_, send_mr_);
  if (recv_mr_ != nullptr) net_->deregMr(recv_, recv_mr_);
  if (send_ != nullptr) net_->closeSend(send_);
  if (recv_ != nullptr) net_->closeRecv(recv_);
  if (listen_ != nullptr) net_->closeListen(listen_);
  if (net_->fini != nullptr) net_->fini();
  // The library stays loaded: a provider may still own threads.
}

// Every wait is bounded: a stuck plugin ends the run with an error instead
// of hanging the benchmark.
constexpr auto kWaitLimit = std::chrono::seconds(60);

void* Link::isend(size_t size, int tag) {
  void* request = nullptr;
  const auto deadline = Clock::now() + kWaitLimit;
  while (request == nullptr) {
    if (Clock::now() > deadline) throw failure("isend refused for 60 s");
    check(net_->isend(send_, send_buf_.data(), static_cast<int>(size), tag, send_mr_, &request),
          "isend");
  }
  return request;
}

void* Link::irecv(size_t size, int tag) {
  void* data = recv_buf_.data();
  int sizes = static_cast<int>(size);
  void* request = nullptr;
  const auto deadline = Clock::now() + kWaitLimit;
  while (request == nullptr) {
    if (Clock::now() > deadline) throw failure("irecv refused for 60 s");
    check(net_->irecv(recv_, 1, &data, &sizes, &tag, &recv_mr_, &request), "irecv");
  }
  return request;
}

bool Link::test(void* request, int* size) {
  int done = 0;
  int got = 0;
  check(net_->test(request, &done, &got), "test");
  if (done != 0 && size != nullptr) *size = got;
  return done != 0;
}

void Link::wait(void* request, int* size) {
  const auto deadline = Clock::now() + kWaitLimit;
  while (!test(request, size)) {
    if (Clock::now() > deadline) throw failure("a request did not complete in 60 s");
  }
}

void Link::verify(bool side_a, size_t size) {
  constexpr int kVerifyTag = 9;
  auto byte = [](size_t i, int salt) {
    return static_cast<char>((i * 131 + (i >> 16) + salt) & 0xff);
  };
  for (size_t i = 0; i < size; ++i) send_buf_[i] = byte(i, side_a ? 1 : 2);
  std::fill(recv_buf_.begin(), recv_buf_.begin() + size, 0);
  void* recv = irecv(size, kVerifyTag);
  barrier();
  int got = -1;
  void* send = isend(size, kVerifyTag);
  // Test both: with one endpoint per comm and a manual-progress provider,
  // a large send completes only while the peer's receiving comm is
  // progressed, and the peer is sending too (NCCL's proxy polls every
  // request the same way).
  bool sent = false, received = false;
  const auto deadline = Clock::now() + kWaitLimit;
  while (!sent || !received) {
    if (Clock::now() > deadline) throw failure("verification: not done in 60 s");
    if (!sent) sent = test(send);
    if (!received) received = test(recv, &got);
  }
  if (got != static_cast<int>(size))
    throw failure("verification: received " + std::to_string(got) + " bytes, expected " +
                  std::to_string(size));
  for (size_t i = 0; i < size; ++i) {
    if (recv_buf_[i] != byte(i, side_a ? 2 : 1))
      throw failure("verification: byte " + std::to_string(i) + " differs");
  }
  barrier();
}

void Link::oob_send(const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(oob_, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw failure("out-of-band write failed");
    p += n;
    size -= static_cast<size_t>(n);
  }
}

void Link::oob_recv(void* data, size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = ::read(oob_, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw failure("out-of-band read failed (the peer exited?)");
    p += n;
    size -= static_cast<size_t>(n);
  }
}

void Link::barrier() {
  char token = 'b';
  oob_send(&token, 1);
  oob_recv(&token, 1);
}

}  // namespace nccom::bench
