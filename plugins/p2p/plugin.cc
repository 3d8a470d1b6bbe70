// The C boundary of the P2P transport: the nccom_plugin descriptor and its
// nccom_transport_ops_t. Proxy-free, as the original's p2pTransport: the
// memory-registration and op slots are NULL, so the host never builds a proxy
// path over P2P and neuronGetNetConnector answers NULL for a P2P hop. Every
// slot checks its pointers and catches exceptions.
#include "p2p_connector.h"

#include <nccom/plugin.h>
#include <nccom/transport_plugin.h>
#include <nccom/util/boundary.h>

#include <new>

namespace {

using namespace nccom::p2p;
using nccom::util::fail;
using nccom::util::guarded;

// Nothing process-wide: connectors carry all their state.
struct PluginContext {};

// Every message a caught exception leaves starts "P2P <slot>:".
constexpr const char* kWho = "P2P";

Connector* as_connector(void* p) {
  auto* c = static_cast<Connector*>(p);
  return c != nullptr && c->marker == kConnectorMarker ? c : nullptr;
}

nccom_plugin_status_t p2p_init(const nccom_host_api_t* host, void** plugin_ctx) {
  if (plugin_ctx == nullptr) return NCCOM_PLUGIN_INVALID_ARGUMENT;
  nccom::util::install_logger(host);
  auto* ctx = new (std::nothrow) PluginContext();
  if (ctx == nullptr) return NCCOM_PLUGIN_SYSTEM_ERROR;
  *plugin_ctx = ctx;
  return NCCOM_PLUGIN_OK;
}

void p2p_fini(void* plugin_ctx) { delete static_cast<PluginContext*>(plugin_ctx); }

nccom_plugin_status_t p2p_can_connect(void*, const nccom_transport_comm_t* comm,
                                      const nccom_transport_peer_t* me,
                                      const nccom_transport_peer_t* peer, int* ok) {
  if (comm == nullptr || me == nullptr || peer == nullptr || ok == nullptr) {
    return NCCOM_PLUGIN_INVALID_ARGUMENT;
  }
  *ok = reachable(*me, *peer) ? 1 : 0;
  return NCCOM_PLUGIN_OK;
}

nccom_plugin_status_t p2p_setup(void* ctx, const nccom_transport_comm_t* comm,
                                nccom_transport_direction_t dir, int channel,
                                const nccom_transport_peer_t* peer,
                                uint8_t blob_out[NCCOM_TRANSPORT_CONNECT_BYTES], void** connector,
                                char* err, size_t err_len) {
  return guarded(kWho, "setup", err, err_len, [&] {
    if (ctx == nullptr || connector == nullptr) return NCCOM_PLUGIN_INVALID_ARGUMENT;
    auto c = connector_setup(comm, dir, channel, peer, blob_out);
    if (!c) return fail(c.error(), err, err_len);
    *connector = *c;
    return NCCOM_PLUGIN_OK;
  });
}

nccom_plugin_status_t p2p_connect(void*, void* connector,
                                  const uint8_t peer_blob[NCCOM_TRANSPORT_CONNECT_BYTES], int* done,
                                  char* err, size_t err_len) {
  return guarded(kWho, "connect", err, err_len, [&] {
    Connector* c = as_connector(connector);
    if (c == nullptr || done == nullptr) return NCCOM_PLUGIN_INVALID_ARGUMENT;
    *done = 0;
    if (auto s = connector_connect(c, peer_blob); !s) return fail(s.error(), err, err_len);
    *done = 1;
    return NCCOM_PLUGIN_OK;
  });
}

void p2p_free_connector(void*, void* connector) {
  if (Connector* c = as_connector(connector); c != nullptr) connector_free(c);
}

const nccom_transport_ops_t kOps = {
    {sizeof(nccom_transport_ops_t), 0, p2p_init, p2p_fini},
    NCCOM_TRANSPORT_OPS_VERSION,
    0,
    p2p_can_connect,
    p2p_setup,
    p2p_connect,
    p2p_free_connector,
    nullptr,  // reg_mr: no network comm behind a P2P connector
    nullptr,  // dereg_mr
    nullptr,  // create_op: P2P has no proxy path (the device moves the data)
    nullptr,  // op_progress
    nullptr,  // op_rearm
    nullptr,  // op_describe
    nullptr,  // op_free
    nullptr,  // op_waiting_on
    nullptr,  // op_waiting_in
};

}  // namespace

extern "C" NCCOM_PLUGIN_EXPORT const nccom_plugin_descriptor_t nccom_plugin = {
    NCCOM_PLUGIN_ABI_VERSION,
    sizeof(nccom_plugin_descriptor_t),
    NCCOM_PLUGIN_KIND_TRANSPORT,
    0,
    "p2p",
    "1.0.0",
    0,
    &kOps.head,
    nullptr,  // knobs: none
};
