// The C boundary of the NET_NEURON transport: the nccom_plugin descriptor and
// its nccom_transport_ops_t. Every slot checks its pointers, catches C++
// exceptions, and turns an Error into a status plus the caller's message.
#include "connector.h"
#include "op.h"

#include <nccom/plugin.h>
#include <nccom/transport_plugin.h>
#include <nccom/util/boundary.h>

#include <new>

namespace {

using namespace nccom::net_neuron;
using nccom::util::fail;
using nccom::util::guarded;
using nccom::util::put_text;

struct PluginContext {
  ConnectorRegistry registry;
};

// Every message a caught exception leaves starts "NET_NEURON <slot>:".
constexpr const char* kWho = "NET_NEURON";

Connector* as_connector(void* p) {
  auto* c = static_cast<Connector*>(p);
  return c != nullptr && c->marker == kConnectorMarker ? c : nullptr;
}

nccom_plugin_status_t nn_init(const nccom_host_api_t* host, void** plugin_ctx) {
  if (plugin_ctx == nullptr) return NCCOM_PLUGIN_INVALID_ARGUMENT;
  nccom::util::install_logger(host);
  auto* ctx = new (std::nothrow) PluginContext();
  if (ctx == nullptr) return NCCOM_PLUGIN_SYSTEM_ERROR;
  *plugin_ctx = ctx;
  return NCCOM_PLUGIN_OK;
}

void nn_fini(void* plugin_ctx) { delete static_cast<PluginContext*>(plugin_ctx); }

nccom_plugin_status_t nn_can_connect(void*, const nccom_transport_comm_t* comm,
                                     const nccom_transport_peer_t* me,
                                     const nccom_transport_peer_t* peer, int* ok) {
  if (comm == nullptr || me == nullptr || peer == nullptr || ok == nullptr) {
    return NCCOM_PLUGIN_INVALID_ARGUMENT;
  }
  // The last transport in the table: any other rank, as long as a net exists.
  *ok = net_of(comm) != nullptr && comm->net_devices > 0 && me->rank != peer->rank;
  return NCCOM_PLUGIN_OK;
}

nccom_plugin_status_t nn_setup(void* ctx, const nccom_transport_comm_t* comm,
                               nccom_transport_direction_t dir, int channel,
                               const nccom_transport_peer_t* peer,
                               uint8_t blob_out[NCCOM_TRANSPORT_CONNECT_BYTES], void** connector,
                               char* err, size_t err_len) {
  return guarded(kWho, "setup", err, err_len, [&] {
    if (ctx == nullptr || connector == nullptr) return NCCOM_PLUGIN_INVALID_ARGUMENT;
    auto c = connector_setup(static_cast<PluginContext*>(ctx)->registry, comm, dir, channel, peer,
                             blob_out);
    if (!c) return fail(c.error(), err, err_len);
    *connector = *c;
    return NCCOM_PLUGIN_OK;
  });
}

nccom_plugin_status_t nn_connect(void*, void* connector,
                                 const uint8_t peer_blob[NCCOM_TRANSPORT_CONNECT_BYTES], int* done,
                                 char* err, size_t err_len) {
  return guarded(kWho, "connect", err, err_len, [&] {
    Connector* c = as_connector(connector);
    if (c == nullptr || done == nullptr) return NCCOM_PLUGIN_INVALID_ARGUMENT;
    bool finished = false;
    if (auto s = connector_connect(c, peer_blob, &finished); !s)
      return fail(s.error(), err, err_len);
    *done = finished ? 1 : 0;
    return NCCOM_PLUGIN_OK;
  });
}

void nn_free_connector(void* ctx, void* connector) {
  Connector* c = as_connector(connector);
  if (ctx == nullptr || c == nullptr) return;
  connector_free(static_cast<PluginContext*>(ctx)->registry, c);
}

nccom_plugin_status_t nn_reg_mr(void*, void* connector, void* data, size_t size, int type,
                                void** mhandle, char* err, size_t err_len) {
  return guarded(kWho, "reg_mr", err, err_len, [&] {
    Connector* c = as_connector(connector);
    if (c == nullptr || mhandle == nullptr) return NCCOM_PLUGIN_INVALID_ARGUMENT;
    auto mh = connector_reg_mr(c, data, size, type);
    if (!mh) return fail(mh.error(), err, err_len);
    *mhandle = *mh;
    return NCCOM_PLUGIN_OK;
  });
}

nccom_plugin_status_t nn_dereg_mr(void*, void* connector, void* mhandle) {
  Connector* c = as_connector(connector);
  if (c == nullptr) return NCCOM_PLUGIN_INVALID_ARGUMENT;
  // The slot has no message buffer: a caught exception is its status alone.
  return guarded(kWho, "dereg_mr", nullptr, 0, [&] {
    return connector_dereg_mr(c, mhandle) ? NCCOM_PLUGIN_OK : NCCOM_PLUGIN_ERROR;
  });
}

nccom_plugin_status_t nn_create_op(void* ctx, const nccom_transport_comm_t* comm,
                                   nccom_transport_direction_t dir, const net_ops_info_t* ops,
                                   int ops_n, const void* fifo, int fifo_n, void** op, char* err,
                                   size_t err_len) {
  return guarded(kWho, "create_op", err, err_len, [&] {
    if (ctx == nullptr || op == nullptr) return NCCOM_PLUGIN_INVALID_ARGUMENT;
    auto created = NetOp::create(static_cast<PluginContext*>(ctx)->registry, comm, dir, ops, ops_n,
                                 fifo, fifo_n);
    if (!created) return fail(created.error(), err, err_len);
    *op = *created;
    return NCCOM_PLUGIN_OK;
  });
}

nccom_plugin_status_t nn_op_progress(void* op, int* idle, int* execution_done, char* err,
                                     size_t err_len) {
  return guarded(kWho, "op_progress", err, err_len, [&] {
    if (op == nullptr || idle == nullptr || execution_done == nullptr) {
      return NCCOM_PLUGIN_INVALID_ARGUMENT;
    }
    bool i = true;
    bool d = false;
    auto s = static_cast<NetOp*>(op)->progress(&i, &d);
    *idle = i ? 1 : 0;
    *execution_done = d ? 1 : 0;
    return s ? NCCOM_PLUGIN_OK : fail(s.error(), err, err_len);
  });
}

nccom_plugin_status_t nn_op_rearm(void* op, char* err, size_t err_len) {
  return guarded(kWho, "op_rearm", err, err_len, [&] {
    if (op == nullptr) return NCCOM_PLUGIN_INVALID_ARGUMENT;
    auto s = static_cast<NetOp*>(op)->rearm();
    return s ? NCCOM_PLUGIN_OK : fail(s.error(), err, err_len);
  });
}

void nn_op_describe(void* op, char* buf, size_t len) {
  if (op == nullptr || buf == nullptr || len == 0) return;
  try {
    put_text(buf, len, static_cast<NetOp*>(op)->describe());
  } catch (...) {
    put_text(buf, len, "NET_NEURON op (description unavailable)");
  }
}

void nn_op_free(void* op) { delete static_cast<NetOp*>(op); }

int nn_op_waiting_on(void* op, int* peer, int* channel) {
  if (op == nullptr || peer == nullptr || channel == nullptr) return 0;
  return static_cast<NetOp*>(op)->waiting_on(*peer, *channel) ? 1 : 0;
}

void nn_op_waiting_in(void* op, char* buf, size_t len) {
  if (buf == nullptr || len == 0) return;
  buf[0] = '\0';
  if (op == nullptr) return;
  try {
    put_text(buf, len, static_cast<NetOp*>(op)->waiting_in());
  } catch (...) {
    buf[0] = '\0';
  }
}

const nccom_transport_ops_t kOps = {{sizeof(nccom_transport_ops_t), 0, nn_init, nn_fini},
                                    NCCOM_TRANSPORT_OPS_VERSION,
                                    0,
                                    nn_can_connect,
                                    nn_setup,
                                    nn_connect,
                                    nn_free_connector,
                                    nn_reg_mr,
                                    nn_dereg_mr,
                                    nn_create_op,
                                    nn_op_progress,
                                    nn_op_rearm,
                                    nn_op_describe,
                                    nn_op_free,
                                    nn_op_waiting_on,
                                    nn_op_waiting_in};

}  // namespace

extern "C" NCCOM_PLUGIN_EXPORT const nccom_plugin_descriptor_t nccom_plugin = {
    NCCOM_PLUGIN_ABI_VERSION,
    sizeof(nccom_plugin_descriptor_t),
    NCCOM_PLUGIN_KIND_TRANSPORT,
    0,
    "net_neuron",
    "1.0.0",
    0,
    &kOps.head,
    nullptr,  // knobs: none
};
