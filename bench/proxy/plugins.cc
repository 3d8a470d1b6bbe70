#include "plugins.h"

#include "bench_world.h"
#include "build_paths.h"

#include <dlfcn.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace nccom::bench {
namespace {

// Plugin log lines go to stderr, WARN only (INFO would drown the tables).
void net_logger(ncclDebugLogLevel level, unsigned long, const char*, int, const char* fmt, ...) {
  if (fmt == nullptr || level != NCCL_LOG_WARN) return;
  va_list args;
  va_start(args, fmt);
  std::fprintf(stderr, "net WARN ");
  std::vfprintf(stderr, fmt, args);
  std::fprintf(stderr, "\n");
  va_end(args);
}

void host_logger(nccom_log_level_t level, unsigned long, const char*, int, const char* fmt, ...) {
  if (fmt == nullptr || level != NCCOM_LOG_LEVEL_WARN) return;
  va_list args;
  va_start(args, fmt);
  std::fprintf(stderr, "transport WARN ");
  std::vfprintf(stderr, fmt, args);
  std::fprintf(stderr, "\n");
  va_end(args);
}

std::string text(const char* err) { return err[0] != '\0' ? err : "(no message)"; }

class BenchOp : public proxy::ProxyOp {
 public:
  BenchOp(const nccom_transport_ops_t* ops, void* op) : ops_(ops), op_(op) {}
  ~BenchOp() override { ops_->op_free(op_); }
  Result<proxy::Tick> progress() override {
    char err[512] = "";
    int idle = 1, done = 0;
    if (ops_->op_progress(op_, &idle, &done, err, sizeof err) != NCCOM_PLUGIN_OK) {
      return make_error(NRT_NETWORK_PROXY_FAILURE, text(err));
    }
    return proxy::Tick{idle != 0, done != 0};
  }
  Status rearm() override {
    char err[512] = "";
    if (ops_->op_rearm(op_, err, sizeof err) == NCCOM_PLUGIN_OK) return {};
    return make_error(NRT_NETWORK_PROXY_FAILURE, "re-arm: " + text(err));
  }
  std::string describe() const override {
    char buf[512] = "";
    ops_->op_describe(op_, buf, sizeof buf);
    return buf;
  }

 private:
  const nccom_transport_ops_t* ops_;
  void* op_;
};

class BenchTransport : public proxy::ProxyTransport {
 public:
  BenchTransport(const nccom_transport_ops_t* ops, void* ctx, const nccom_transport_comm_t* comm)
      : ops_(ops), ctx_(ctx), comm_(comm) {}
  Result<std::unique_ptr<proxy::ProxyOp>> make_op(proxy::Direction dir, const proxy::BlockFifos& f,
                                                  uint32_t, uint32_t) override {
    const bool send = dir == proxy::Direction::Send;
    char err[512] = "";
    void* op = nullptr;
    const nccom_plugin_status_t s = ops_->create_op(
        ctx_, comm_, send ? NCCOM_TRANSPORT_SEND : NCCOM_TRANSPORT_RECV, f.ops, f.ops_n,
        send ? static_cast<const void*>(f.src) : static_cast<const void*>(f.dst),
        send ? f.src_n : f.dst_n, &op, err, sizeof err);
    if (s != NCCOM_PLUGIN_OK || op == nullptr) {
      if (op != nullptr) ops_->op_free(op);
      return make_error(NRT_FAILURE, std::string("create_op: ") + text(err));
    }
    return std::unique_ptr<proxy::ProxyOp>(std::make_unique<BenchOp>(ops_, op));
  }

 private:
  const nccom_transport_ops_t* ops_;
  void* ctx_;
  const nccom_transport_comm_t* comm_;
};

}  // namespace

std::unique_ptr<proxy::ProxyTransport> plugin_proxy_transport(const nccom_transport_ops_t* ops,
                                                              void* ctx,
                                                              const nccom_transport_comm_t* comm) {
  return std::make_unique<BenchTransport>(ops, ctx, comm);
}

namespace {
std::string g_transport_path = NCCOM_BENCH_TRANSPORT_PLUGIN;
}  // namespace

void set_transport_path(const std::string& path) { g_transport_path = path; }

const nccom_transport_ops_t* transport_ops(void** ctx, std::string* why) {
  struct Loaded {
    const nccom_transport_ops_t* ops = nullptr;
    void* ctx = nullptr;
    std::string why;
  };
  static Loaded loaded = [] {
    Loaded l;
    void* lib = dlopen(g_transport_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      l.why = std::string("dlopen: ") + dlerror();
      return l;
    }
    auto* d = static_cast<const nccom_plugin_descriptor_t*>(dlsym(lib, NCCOM_PLUGIN_SYMBOL));
    if (d == nullptr || d->kind != NCCOM_PLUGIN_KIND_TRANSPORT) {
      l.why = g_transport_path + " has no transport descriptor";
      return l;
    }
    static nccom_host_api_t host{sizeof(nccom_host_api_t), NCCOM_PLUGIN_ABI_VERSION, host_logger,
                                 nullptr, nullptr};
    auto* ops = reinterpret_cast<const nccom_transport_ops_t*>(d->ops);
    if (ops->head.init(&host, &l.ctx) != NCCOM_PLUGIN_OK) {
      l.why = "transport init failed";
      return l;
    }
    l.ops = ops;
    return l;
  }();
  *ctx = loaded.ctx;
  if (why != nullptr) *why = loaded.why;
  return loaded.ops;
}

const ncclNet_v6_t* load_net(const char* path, const char* provider, std::string* why) {
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    *why = std::string("dlopen: ") + dlerror();
    return nullptr;
  }
  auto* net = static_cast<const ncclNet_v6_t*>(dlsym(lib, NCCL_NET_PLUGIN_SYMBOL_V6));
  if (net == nullptr) {
    *why = std::string(path) + " has no " NCCL_NET_PLUGIN_SYMBOL_V6;
    return nullptr;
  }
  if (provider != nullptr) setenv("FI_PROVIDER", provider, 1);
  if (!init_net(net, why)) {
    *why = std::string(path) + ": " + *why;
    return nullptr;
  }
  return net;
}

bool init_net(const ncclNet_v6_t* net, std::string* why) {
  if (net->init(net_logger) != ncclSuccess) {
    *why = std::string(net->name) + ": init failed";
    return false;
  }
  int ndev = 0;
  if (net->devices(&ndev) != ncclSuccess || ndev < 1) {
    *why = std::string(net->name) + ": no devices";
    return false;
  }
  return true;
}

}  // namespace nccom::bench
