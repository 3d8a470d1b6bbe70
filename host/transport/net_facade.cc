#include "transport/net_facade.h"

#include "net/plugin_answers.h"
#include "net/setup_calls.h"

#include <atomic>
#include <string>

namespace nccom::transport {
namespace {

std::atomic<net::Net*> g_net{nullptr};
std::string g_name;  // the facade table's name; written only when rebinding

net::Net& of(void* ctx) { return *static_cast<net::Net*>(ctx); }

// The calls, on the Net given as context (nccom_transport_net_t). The
// context-free table below forwards each to the bound Net.
//
// The host refused more than kMaxNetDevices devices when it selected the
// plugin and connected the communicator; a transport asking itself sees no
// more than that either.
ncclResult_t c_devices(void* ctx, int* n) {
  const ncclResult_t r = of(ctx).devices(n);
  if (r == ncclSuccess && n != nullptr && *n > net::kMaxNetDevices) *n = net::kMaxNetDevices;
  return r;
}
// A transport sizes its grouped receives by maxRecvs: it is handed the value
// clamped into 1 .. kMaxNetRecvs (the selection warned once about it).
ncclResult_t c_props(void* ctx, int dev, ncclNetProperties_v6_t* p) {
  const ncclResult_t r = of(ctx).get_properties(dev, p);
  if (r == ncclSuccess && p != nullptr) (void)net::clamp_properties(*p);
  return r;
}
ncclResult_t c_listen(void* ctx, int dev, void* h, void** c) { return of(ctx).listen(dev, h, c); }
// connect and accept run on helper threads (net/setup_calls.h): a plugin
// whose calls block cannot hang the caller past its deadline.
ncclResult_t c_connect(void* ctx, int dev, void* h, void** c) {
  return of(ctx).setup_calls().connect(dev, h, c);
}
ncclResult_t c_accept(void* ctx, void* l, void** c) { return of(ctx).setup_calls().accept(l, c); }
ncclResult_t c_reg(void* ctx, void* c, void* d, size_t s, int t, void** m) {
  return of(ctx).reg_mr(c, d, s, t, m);
}
ncclResult_t c_reg_dmabuf(void* ctx, void* c, void* d, size_t s, int t, uint64_t o, int fd,
                          void** m) {
  return of(ctx).reg_mr_dma_buf(c, d, s, t, o, fd, m);
}
ncclResult_t c_dereg(void* ctx, void* c, void* m) { return of(ctx).dereg_mr(c, m); }
ncclResult_t c_isend(void* ctx, void* c, void* d, int s, int tag, void* m, void** r) {
  return of(ctx).isend(c, d, s, tag, m, r);
}
ncclResult_t c_irecv(void* ctx, void* c, int n, void** d, int* s, int* t, void** m, void** r) {
  return of(ctx).irecv(c, n, d, s, t, m, r);
}
ncclResult_t c_iflush(void* ctx, void* c, int n, void** d, int* s, void** m, void** r) {
  return of(ctx).iflush(c, n, d, s, m, r);
}
ncclResult_t c_test(void* ctx, void* r, int* done, int* s) { return of(ctx).test(r, done, s); }
ncclResult_t c_close_send(void* ctx, void* c) { return of(ctx).close_send(c); }
ncclResult_t c_close_recv(void* ctx, void* c) { return of(ctx).close_recv(c); }
ncclResult_t c_close_listen(void* ctx, void* c) { return of(ctx).setup_calls().close_listen(c); }
ncclResult_t c_key(void* ctx, void* m, uint64_t* k) { return of(ctx).get_mr_key(m, k); }
ncclResult_t c_iwrite(void* ctx, void* c, void* s, size_t n, void* m, uint64_t d, uint64_t k,
                      void** r) {
  return of(ctx).iwrite(c, s, n, m, d, k, r);
}
ncclResult_t c_iwrite_inline(void* ctx, void* c, void* s, size_t n, uint64_t d, uint64_t k,
                             void** r) {
  return of(ctx).iwrite_inline(c, s, n, d, k, r);
}
ncclResult_t c_iread(void* ctx, void* c, void* d, size_t n, void* m, uint64_t s, uint64_t k,
                     void** r) {
  return of(ctx).iread(c, d, n, m, s, k, r);
}

// The context-free v6 table: the bound Net as context.
void* bound() { return g_net.load(std::memory_order_acquire); }

// init and fini belong to the host: a transport calling them through the
// facade gets success without effect (the net is already initialised and
// its lifetime is the host's).
ncclResult_t f_init(ncclDebugLogger_t) { return ncclSuccess; }
ncclResult_t f_fini() { return ncclSuccess; }
ncclResult_t f_devices(int* n) { return c_devices(bound(), n); }
ncclResult_t f_props(int dev, ncclNetProperties_v6_t* p) { return c_props(bound(), dev, p); }
ncclResult_t f_listen(int dev, void* h, void** c) { return c_listen(bound(), dev, h, c); }
ncclResult_t f_connect(int dev, void* h, void** c) { return c_connect(bound(), dev, h, c); }
ncclResult_t f_accept(void* l, void** c) { return c_accept(bound(), l, c); }
ncclResult_t f_reg(void* c, void* d, size_t s, int t, void** m) {
  return c_reg(bound(), c, d, s, t, m);
}
ncclResult_t f_reg_dmabuf(void* c, void* d, size_t s, int t, uint64_t o, int fd, void** m) {
  return c_reg_dmabuf(bound(), c, d, s, t, o, fd, m);
}
ncclResult_t f_dereg(void* c, void* m) { return c_dereg(bound(), c, m); }
ncclResult_t f_isend(void* c, void* d, int s, int tag, void* m, void** r) {
  return c_isend(bound(), c, d, s, tag, m, r);
}
ncclResult_t f_irecv(void* c, int n, void** d, int* s, int* t, void** m, void** r) {
  return c_irecv(bound(), c, n, d, s, t, m, r);
}
ncclResult_t f_iflush(void* c, int n, void** d, int* s, void** m, void** r) {
  return c_iflush(bound(), c, n, d, s, m, r);
}
ncclResult_t f_test(void* r, int* done, int* s) { return c_test(bound(), r, done, s); }
ncclResult_t f_close_send(void* c) { return c_close_send(bound(), c); }
ncclResult_t f_close_recv(void* c) { return c_close_recv(bound(), c); }
ncclResult_t f_close_listen(void* c) { return c_close_listen(bound(), c); }
ncclResult_t f_key(void* m, uint64_t* k) { return c_key(bound(), m, k); }
ncclResult_t f_iwrite(void* c, void* s, size_t n, void* m, uint64_t d, uint64_t k, void** r) {
  return c_iwrite(bound(), c, s, n, m, d, k, r);
}
ncclResult_t f_iwrite_inline(void* c, void* s, size_t n, uint64_t d, uint64_t k, void** r) {
  return c_iwrite_inline(bound(), c, s, n, d, k, r);
}
ncclResult_t f_iread(void* c, void* d, size_t n, void* m, uint64_t s, uint64_t k, void** r) {
  return c_iread(bound(), c, d, n, m, s, k, r);
}

ncclNet_v6_t g_table = {nullptr,         f_init,       f_fini,         f_devices, f_props,
                        f_listen,        f_connect,    f_accept,       f_reg,     f_reg_dmabuf,
                        f_dereg,         f_isend,      f_irecv,        f_iflush,  f_test,
                        f_close_send,    f_close_recv, f_close_listen, f_key,     f_iwrite,
                        f_iwrite_inline, f_iread};

}  // namespace

std::string net_origin(const net::Net& net) {
  return net::describe(net.info()) + " from " + net.info().origin;
}

std::string net_in_flight(const nccom_transport_net_t& net) {
  return net.ctx == nullptr ? std::string() : net::describe_in_flight(of(net.ctx));
}

nccom_transport_net_t net_with_ctx(net::Net& net) {
  nccom_transport_net_t t{};
  t.struct_size = sizeof t;
  t.ctx = &net;
  t.name = net.info().name.c_str();
  t.devices = c_devices;
  t.get_properties = c_props;
  t.listen = c_listen;
  t.connect = c_connect;
  t.accept = c_accept;
  t.reg_mr = c_reg;
  t.reg_mr_dma_buf = net.supports(net::kCapDmaBuf) ? c_reg_dmabuf : nullptr;
  t.dereg_mr = c_dereg;
  t.isend = c_isend;
  t.irecv = c_irecv;
  t.iflush = net.supports(net::kCapFlush) ? c_iflush : nullptr;
  t.test = c_test;
  t.close_send = c_close_send;
  t.close_recv = c_close_recv;
  t.close_listen = c_close_listen;
  const bool rma = net.supports(net::kCapRma);
  t.get_mr_key = rma ? c_key : nullptr;
  t.iwrite = rma ? c_iwrite : nullptr;
  t.iwrite_inline = rma ? c_iwrite_inline : nullptr;
  t.iread = rma ? c_iread : nullptr;
  return t;
}

const ncclNet_v6_t* net_v6_for(net::Net& net) {
  if (g_net.load(std::memory_order_acquire) != &net) {
    g_name = net.info().name;
    g_table.name = g_name.c_str();
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
