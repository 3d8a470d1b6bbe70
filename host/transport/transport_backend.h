// nccom::transport::TransportBackend — the host's view of one transport
// plugin (sdk nccom/transport_plugin.h): its vtable checked once at bind,
// C calls wrapped into Results that name the plugin and the call, and the
// proxy ops it creates served to the scheduler as proxy::ProxyOp.
#pragma once

#include "plugin/plugin_loader.h"
#include "proxy/scheduler.h"

#include <nccom/transport_plugin.h>
#include <nccom/util/result.h>

#include <array>
#include <memory>
#include <string>

namespace nccom::transport {

// A connector created by a transport, released through it when destroyed.
class Connector {
 public:
  Connector(const nccom_transport_ops_t& ops, void* ctx, void* handle)
      : ops_(&ops), ctx_(ctx), handle_(handle) {}
  ~Connector() {
    if (handle_ != nullptr) ops_->free_connector(ctx_, handle_);
  }
  Connector(const Connector&) = delete;
  Connector& operator=(const Connector&) = delete;
  void* handle() const { return handle_; }

 private:
  const nccom_transport_ops_t* ops_;
  void* ctx_;
  void* handle_;
};

class TransportBackend {
 public:
  // Checks the vtable: size, ops_version, the mandatory connection slots,
  // and that the five op slots are either all set or all NULL.
  static Result<TransportBackend> bind(plugin::LoadedPlugin& plugin);

  const std::string& name() const { return plugin_->name(); }
  bool has_proxy() const { return ops_->create_op != nullptr; }

  Result<bool> can_connect(const nccom_transport_comm_t& comm, const nccom_transport_peer_t& me,
                           const nccom_transport_peer_t& peer) const;

  struct SetupResult {
    std::unique_ptr<Connector> connector;
    std::array<uint8_t, NCCOM_TRANSPORT_CONNECT_BYTES> blob{};
  };
  Result<SetupResult> setup(const nccom_transport_comm_t& comm, nccom_transport_direction_t dir,
                            int channel, const nccom_transport_peer_t& peer) const;

  // One non-blocking step of the connection; true once connected.
  Result<bool> connect_step(
      Connector& connector,
      const std::array<uint8_t, NCCOM_TRANSPORT_CONNECT_BYTES>& peer_blob) const;

  // Memory registration on a connector's network comm; an error when the
  // transport has no reg_mr (a proxy-free transport).
  Result<void*> reg_mr(Connector& connector, void* data, size_t size, int type) const;
  Status dereg_mr(Connector& connector, void* mhandle) const;

  // The scheduler's transport: ops of this plugin for `comm` (which must
  // outlive every op created).
  std::unique_ptr<proxy::ProxyTransport> proxy_transport(const nccom_transport_comm_t& comm) const;

 private:
  TransportBackend(plugin::LoadedPlugin& p, const nccom_transport_ops_t& ops)
      : plugin_(&p), ops_(&ops) {}
  Error failure(const char* call, nccom_plugin_status_t status, const char* detail) const;

  plugin::LoadedPlugin* plugin_;
  const nccom_transport_ops_t* ops_;
};

}  // namespace nccom::transport
