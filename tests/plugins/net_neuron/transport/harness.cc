#include "harness.h"

#include "build_paths.h"
#include "machine.h"

#include <nccom/util/transport_net.h>

#include <dlfcn.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>

namespace nn_test {
namespace {

std::mutex g_log_mu;
std::string g_logs;

void append_log(const char* level, const char* fmt, va_list args) {
  char text[2048];
  std::vsnprintf(text, sizeof text, fmt, args);
  std::lock_guard lock(g_log_mu);
  g_logs += std::string(level) + text + "\n";
}

void net_logger(ncclDebugLogLevel level, unsigned long, const char*, int, const char* fmt, ...) {
  if (fmt == nullptr) return;
  va_list args;
  va_start(args, fmt);
  append_log(level == NCCL_LOG_WARN ? "NET WARN " : "NET INFO ", fmt, args);
  va_end(args);
}

void host_logger(nccom_log_level_t level, unsigned long, const char*, int, const char* fmt, ...) {
  if (fmt == nullptr) return;
  va_list args;
  va_start(args, fmt);
  append_log(level == NCCOM_LOG_LEVEL_WARN ? "WARN " : "INFO ", fmt, args);
  va_end(args);
}

struct Loaded {
  const ncclNet_v6_t* net = nullptr;
  std::string why;
};

Loaded load_net(const char* path, const char* provider) {
  Loaded l;
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    l.why = std::string("dlopen: ") + dlerror();
    return l;
  }
  auto* net = static_cast<const ncclNet_v6_t*>(dlsym(lib, "ncclNetPlugin_v6"));
  if (net == nullptr) {
    l.why = std::string(path) + " exports no ncclNetPlugin_v6";
    return l;
  }
  if (provider != nullptr) setenv("FI_PROVIDER", provider, 1);
  if (net->init(net_logger) != ncclSuccess) {
    l.why = "init failed: " + captured_logs();
    return l;
  }
  int ndev = 0;
  if (const ncclResult_t rc = net->devices(&ndev); rc != ncclSuccess || ndev < 1) {
    l.why = "devices() returned " + std::to_string(rc) + " with " + std::to_string(ndev) +
            " devices: " + captured_logs();
    return l;
  }
  l.net = net;
  return l;
}

size_t dyn_send_size(enc_host_mem_t* dyn, size_t dts, int dst_rank, int) {
  auto* t = static_cast<DynTable*>(dyn->va);
  t->data_type_sz_seen = dts;
  return t->send_size[dst_rank];
}
size_t dyn_send_offset(enc_host_mem_t* dyn, size_t, int dst_rank, int) {
  return static_cast<DynTable*>(dyn->va)->send_offset[dst_rank];
}
size_t dyn_recv_offset(enc_host_mem_t* dyn, size_t, int src_rank, int) {
  return static_cast<DynTable*>(dyn->va)->recv_offset[src_rank];
}
void dyn_set_recv_size(enc_host_mem_t* dyn, size_t bytes, size_t dts, int src_rank, int) {
  auto* t = static_cast<DynTable*>(dyn->va);
  std::lock_guard lock(t->mu);
  t->recv_sizes.emplace_back(src_rank, bytes);
  t->data_type_sz_seen = dts;
}

}  // namespace

std::string captured_logs() {
  std::lock_guard lock(g_log_mu);
  return g_logs;
}

void clear_logs() {
  std::lock_guard lock(g_log_mu);
  g_logs.clear();
}

const ncclNet_v6_t* net_plugin(const std::string& name, std::string* why) {
  static std::map<std::string, Loaded> loaded;
  static std::mutex mu;
  std::lock_guard lock(mu);
  auto it = loaded.find(name);
  if (it == loaded.end()) {
    if (name == "socket") {
      it = loaded.emplace(name, load_net(NN_SOCKET_PLUGIN, nullptr)).first;
    } else {
      it = loaded.emplace(name, load_net(NN_OFI_PLUGIN, kOfiProvider)).first;
    }
  }
  if (why != nullptr) *why = it->second.why;
  return it->second.net;
}

void require_net(const std::string& name, const ncclNet_v6_t** net) {
  std::string why;
  *net = net_plugin(name, &why);
  if (*net != nullptr) return;
  // Only what the machine lacks may skip, asked of the machine itself.
  if (std::string lack = machine_lacks_for_net(name); !lack.empty())
    NCCOM_SKIP_MACHINE_LACKS(kLibfabricProvider) << lack << "\n(the plugin said: " << why << ")";
  FAIL() << "the " << name << " net plugin could not be used: " << why;
}

namespace {
struct TransportPlugin {
  const nccom_transport_ops_t* ops = nullptr;
  void* ctx = nullptr;
};
const TransportPlugin& transport_plugin() {
  static TransportPlugin t = [] {
    TransportPlugin p;
    void* lib = dlopen(NN_TRANSPORT_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return p;
    auto* d = static_cast<const nccom_plugin_descriptor_t*>(dlsym(lib, NCCOM_PLUGIN_SYMBOL));
    if (d == nullptr || d->kind != NCCOM_PLUGIN_KIND_TRANSPORT) return p;
    static nccom_host_api_t host{sizeof(nccom_host_api_t), NCCOM_PLUGIN_ABI_VERSION, host_logger,
                                 nullptr, nullptr};
    auto* ops = reinterpret_cast<const nccom_transport_ops_t*>(d->ops);
    if (ops->head.init(&host, &p.ctx) != NCCOM_PLUGIN_OK) return p;
    p.ops = ops;
    return p;
  }();
  return t;
}
}  // namespace

const nccom_transport_ops_t* transport() { return transport_plugin().ops; }
void* transport_ctx() { return transport_plugin().ctx; }

void inc_semaphore(volatile uint32_t* sem, uint32_t val) {
  __atomic_fetch_add(sem, val, __ATOMIC_SEQ_CST);
}

uint32_t load(const volatile uint32_t* word) { return __atomic_load_n(word, __ATOMIC_ACQUIRE); }

nccom_transport_net_t with_ctx(const ncclNet_v6_t* net) {
  return nccom::util::as_transport_net(net);
}

std::vector<std::unique_ptr<Rank>> make_ranks(int n, const ncclNet_v6_t* net, int sidelink) {
  std::vector<std::unique_ptr<Rank>> ranks;
  for (int r = 0; r < n; ++r) {
    auto rank = std::make_unique<Rank>();
    for (int p = 0; p < n; ++p) {
      nccom_transport_peer_t peer{};
      peer.rank = p;
      peer.device = p;
      peer.host_hash = 0x1000 + p;  // every rank its own emulated host
      peer.pid_hash = 0x2000 + p;
      peer.bus_id = 0x10 + p;
      rank->peers.push_back(peer);
    }
    nccom_transport_comm_t& c = rank->comm;
    c.struct_size = sizeof c;
    c.rank = r;
    c.n_ranks = n;
    c.sidelink = sidelink;
    c.peers = rank->peers.data();
    rank->net = with_ctx(net);
    c.net = &rank->net;
    c.net_name = "test";
    c.net_devices = 1;
    c.inc_semaphore = inc_semaphore;
    c.dynamic_send_size = dyn_send_size;
    c.dynamic_send_offset = dyn_send_offset;
    c.dynamic_recv_offset = dyn_recv_offset;
    c.set_recv_size = dyn_set_recv_size;
    ranks.push_back(std::move(rank));
  }
  return ranks;
}

Link connect_link(Rank& from, Rank& to, int channel) {
  Link l;
  l.from = &from;
  l.to = &to;
  l.channel = channel;
  const nccom_transport_ops_t* t = transport();
  uint8_t recv_blob[NCCOM_TRANSPORT_CONNECT_BYTES];
  uint8_t send_blob[NCCOM_TRANSPORT_CONNECT_BYTES];
  char err[512] = "";
  EXPECT_EQ(t->setup(transport_ctx(), &to.comm, NCCOM_TRANSPORT_RECV, channel,
                     &to.peers[from.comm.rank], recv_blob, &l.recv_conn, err, sizeof err),
            NCCOM_PLUGIN_OK)
      << err;
  EXPECT_EQ(t->setup(transport_ctx(), &from.comm, NCCOM_TRANSPORT_SEND, channel,
                     &from.peers[to.comm.rank], send_blob, &l.send_conn, err, sizeof err),
            NCCOM_PLUGIN_OK)
      << err;
  int send_done = 0;
  int recv_done = 0;
  for (int round = 0; round < 2000000 && !(send_done && recv_done); ++round) {
    if (!send_done) {
      EXPECT_EQ(t->connect(transport_ctx(), l.send_conn, recv_blob, &send_done, err, sizeof err),
                NCCOM_PLUGIN_OK)
          << err;
    }
    if (!recv_done) {
      EXPECT_EQ(t->connect(transport_ctx(), l.recv_conn, send_blob, &recv_done, err, sizeof err),
                NCCOM_PLUGIN_OK)
          << err;
    }
    if (::testing::Test::HasFailure()) break;
    std::this_thread::yield();
  }
  EXPECT_TRUE(send_done && recv_done) << "connection did not complete within the round budget";
  return l;
}

void free_link(Link& link) {
  if (link.send_conn) transport()->free_connector(transport_ctx(), link.send_conn);
  if (link.recv_conn) transport()->free_connector(transport_ctx(), link.recv_conn);
  link.send_conn = link.recv_conn = nullptr;
}

void register_arena(Arena& a, void* conn, size_t size) {
  a.bytes.assign(size, 0);
  a.conn = conn;
  char err[512] = "";
  ASSERT_EQ(transport()->reg_mr(transport_ctx(), conn, a.bytes.data(), a.bytes.size(),
                                NCCL_PTR_HOST, &a.mhandle, err, sizeof err),
            NCCOM_PLUGIN_OK)
      << err;
}

void deregister_arena(Arena& a) {
  if (a.mhandle != nullptr) transport()->dereg_mr(transport_ctx(), a.conn, a.mhandle);
  a.mhandle = nullptr;
}

DeviceChannel::DeviceChannel(int id, enc_pattern_t pattern, void* send_conn, void* recv_conn,
                             int fold_n) {
  ch.id = id;
  ch.pattern = pattern;
  ch.net_send = &net_send;
  ch.net_recv = &net_recv;
  net_send.fold_n = fold_n;
  net_send.net_host_mem.va = &send_words;
  net_send.net_host_mem.size = sizeof send_words;
  net_send.nccl_connector = send_conn;
  net_send.dynamic_input_host_mem = &dyn_send;
  dyn_send.mem.va = &table_send;
  net_recv.fold_n = fold_n;
  net_recv.net_host_mem.va = &recv_words;
  net_recv.net_host_mem.size = sizeof recv_words;
  net_recv.nccl_connector = recv_conn;
  net_recv.dynamic_input_host_mem = &dyn_recv;
  dyn_recv.mem.va = &table_recv;
}

uint8_t pattern(int rank, int exec, int slice, size_t k) {
  return static_cast<uint8_t>(rank * 131 + exec * 31 + slice * 7 + k * 13 + (k >> 8));
}

}  // namespace nn_test
