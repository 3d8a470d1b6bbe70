// nccom/util/transport_net.h — an ncclNet_v6_t table in the shape a host
// lends a transport plugin (nccom_transport_net_t, the table itself as the
// context), for driving a transport without a host: its tests and
// benchmarks. C++17, header only.
//
//   nccom_transport_net_t net = nccom::util::as_transport_net(my_v6_table);
//   comm.net = &net;  // nccom_transport_comm_t handed to the transport
//
// Slots the table does not have stay NULL, as a host leaves them. Unlike the
// host's, the calls are not clamped or bounded: a connect that blocks, blocks.
#pragma once

#include <nccom/net_v6.h>
#include <nccom/transport_plugin.h>

namespace nccom::util {
namespace detail {
inline const ncclNet_v6_t& v6(void* ctx) { return *static_cast<const ncclNet_v6_t*>(ctx); }
}  // namespace detail

// `net` must outlive every use of the returned table.
inline nccom_transport_net_t as_transport_net(const ncclNet_v6_t* net) {
  nccom_transport_net_t t{};
  t.struct_size = sizeof t;
  t.ctx = const_cast<ncclNet_v6_t*>(net);
  t.name = net->name;
  t.devices = [](void* x, int* n) { return detail::v6(x).devices(n); };
  t.get_properties = [](void* x, int d, ncclNetProperties_v6_t* p) {
    return detail::v6(x).getProperties(d, p);
  };
  t.listen = [](void* x, int d, void* h, void** c) { return detail::v6(x).listen(d, h, c); };
  t.connect = [](void* x, int d, void* h, void** c) { return detail::v6(x).connect(d, h, c); };
  t.accept = [](void* x, void* l, void** c) { return detail::v6(x).accept(l, c); };
  t.reg_mr = [](void* x, void* c, void* d, size_t s, int ty, void** m) {
    return detail::v6(x).regMr(c, d, s, ty, m);
  };
  if (net->regMrDmaBuf != nullptr)
    t.reg_mr_dma_buf = [](void* x, void* c, void* d, size_t s, int ty, uint64_t o, int fd,
                          void** m) { return detail::v6(x).regMrDmaBuf(c, d, s, ty, o, fd, m); };
  t.dereg_mr = [](void* x, void* c, void* m) { return detail::v6(x).deregMr(c, m); };
  t.isend = [](void* x, void* c, void* d, int s, int tag, void* m, void** r) {
    return detail::v6(x).isend(c, d, s, tag, m, r);
  };
  t.irecv = [](void* x, void* c, int n, void** d, int* s, int* tags, void** m, void** r) {
    return detail::v6(x).irecv(c, n, d, s, tags, m, r);
  };
  if (net->iflush != nullptr)
    t.iflush = [](void* x, void* c, int n, void** d, int* s, void** m, void** r) {
      return detail::v6(x).iflush(c, n, d, s, m, r);
    };
  t.test = [](void* x, void* r, int* done, int* s) { return detail::v6(x).test(r, done, s); };
  t.close_send = [](void* x, void* c) { return detail::v6(x).closeSend(c); };
  t.close_recv = [](void* x, void* c) { return detail::v6(x).closeRecv(c); };
  t.close_listen = [](void* x, void* c) { return detail::v6(x).closeListen(c); };
  if (net->getMrKey != nullptr)
    t.get_mr_key = [](void* x, void* m, uint64_t* k) { return detail::v6(x).getMrKey(m, k); };
  if (net->iwrite != nullptr)
    t.iwrite = [](void* x, void* c, void* s, size_t n, void* m, uint64_t d, uint64_t k, void** r) {
      return detail::v6(x).iwrite(c, s, n, m, d, k, r);
    };
  if (net->iwriteInline != nullptr)
    t.iwrite_inline = [](void* x, void* c, void* s, size_t n, uint64_t d, uint64_t k, void** r) {
      return detail::v6(x).iwriteInline(c, s, n, d, k, r);
    };
  if (net->iread != nullptr)
    t.iread = [](void* x, void* c, void* d, size_t n, void* m, uint64_t s, uint64_t k, void** r) {
      return detail::v6(x).iread(c, d, n, m, s, k, r);
    };
  return t;
}

}  // namespace nccom::util
