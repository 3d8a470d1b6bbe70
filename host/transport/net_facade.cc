#include "transport/net_facade.h"

#include "net/plugin_answers.h"
#include "net/setup_calls.h"

#include <atomic>
#include <string>

namespace nccom::transport {
namespace {

std::atomic<net::Net*> g_net{nullptr};
std::string g_name;    // the facade table's name; written only when rebinding
std::string g_origin;  // net_facade_origin(); written only when rebinding

net::Net& bound() { return *g_net.load(std::memory_order_acquire); }

// init and fini belong to the host: a transport calling them through the
// facade gets success without effect (the net is already initialised and
// its lifetime is the host's).
ncclResult_t f_init(ncclDebugLogger_t) { return ncclSuccess; }
ncclResult_t f_fini() { return ncclSuccess; }
// The host refused more than kMaxNetDevices devices when it selected the
// plugin and connected the communicator; a transport asking itself sees no
// more than that either.
ncclResult_t f_devices(int* n) {
  const ncclResult_t r = bound().devices(n);
  if (r == ncclSuccess && n != nullptr && *n > net::kMaxNetDevices) *n = net::kMaxNetDevices;
  return r;
}
// A transport sizes its grouped receives by maxRecvs: it is handed the value
// clamped into 1 .. kMaxNetRecvs (the selection warned once about it).
ncclResult_t f_props(int dev, ncclNetProperties_v6_t* p) {
  const ncclResult_t r = bound().get_properties(dev, p);
  if (r == ncclSuccess && p != nullptr) (void)net::clamp_properties(*p);
  return r;
}
ncclResult_t f_listen(int dev, void* h, void** c) { return bound().listen(dev, h, c); }
// connect and accept run on helper threads (net/setup_calls.h): a plugin
// whose calls block cannot hang the caller past its deadline.
ncclResult_t f_connect(int dev, void* h, void** c) {
  return bound().setup_calls().connect(dev, h, c);
}
ncclResult_t f_accept(void* l, void** c) { return bound().setup_calls().accept(l, c); }
ncclResult_t f_reg(void* c, void* d, size_t s, int t, void** m) {
  return bound().reg_mr(c, d, s, t, m);
}
ncclResult_t f_reg_dmabuf(void* c, void* d, size_t s, int t, uint64_t o, int fd, void** m) {
  return bound().reg_mr_dma_buf(c, d, s, t, o, fd, m);
}
ncclResult_t f_dereg(void* c, void* m) { return bound().dereg_mr(c, m); }
ncclResult_t f_isend(void* c, void* d, int s, int tag, void* m, void** r) {
  return bound().isend(c, d, s, tag, m, r);
}
ncclResult_t f_irecv(void* c, int n, void** d, int* s, int* t, void** m, void** r) {
  return bound().irecv(c, n, d, s, t, m, r);
}
ncclResult_t f_iflush(void* c, int n, void** d, int* s, void** m, void** r) {
  return bound().iflush(c, n, d, s, m, r);
}
ncclResult_t f_test(void* r, int* done, int* s) { return bound().test(r, done, s); }
ncclResult_t f_close_send(void* c) { return bound().close_send(c); }
ncclResult_t f_close_recv(void* c) { return bound().close_recv(c); }
ncclResult_t f_close_listen(void* c) { return bound().setup_calls().close_listen(c); }
ncclResult_t f_key(void* m, uint64_t* k) { return bound().get_mr_key(m, k); }
ncclResult_t f_iwrite(void* c, void* s, size_t n, void* m, uint64_t d, uint64_t k, void** r) {
  return bound().iwrite(c, s, n, m, d, k, r);
}
ncclResult_t f_iwrite_inline(void* c, void* s, size_t n, uint64_t d, uint64_t k, void** r) {
  return bound().iwrite_inline(c, s, n, d, k, r);
}
ncclResult_t f_iread(void* c, void* d, size_t n, void* m, uint64_t s, uint64_t k, void** r) {
  return bound().iread(c, d, n, m, s, k, r);
}

ncclNet_v6_t g_table = {nullptr,         f_init,       f_fini,         f_devices, f_props,
                        f_listen,        f_connect,    f_accept,       f_reg,     f_reg_dmabuf,
                        f_dereg,         f_isend,      f_irecv,        f_iflush,  f_test,
                        f_close_send,    f_close_recv, f_close_listen, f_key,     f_iwrite,
                        f_iwrite_inline, f_iread};

}  // namespace

const char* net_facade_origin() { return g_origin.c_str(); }

std::string net_facade_in_flight() {
  net::Net* n = g_net.load(std::memory_order_acquire);
  return n == nullptr ? std::string() : net::describe_in_flight(*n);
}

const ncclNet_v6_t* net_v6_for(net::Net& net) {
  if (g_net.load(std::memory_order_acquire) != &net) {
    g_name = net.info().name;
    g_table.name = g_name.c_str();
    g_origin = net::describe(net.info()) + " from " + net.info().origin;
    // Slots the plugin does not have stay NULL, as in a native table, so a
    // transport can tell what is supported by looking.
    const bool rma = net.supports(net::kCapRma);
    g_table.getMrKey = rma ? f_key : nullptr;
    g_table.iwrite = rma ? f_iwrite : nullptr;
    g_table.iwriteInline = rma ? f_iwrite_inline : nullptr;
    g_table.iread = rma ? f_iread : nullptr;
    g_table.regMrDmaBuf = net.supports(net::kCapDmaBuf) ? f_reg_dmabuf : nullptr;
    g_table.iflush = net.supports(net::kCapFlush) ? f_iflush : nullptr;
    g_net.store(&net, std::memory_order_release);
  }
  return &g_table;
}

}  // namespace nccom::transport
