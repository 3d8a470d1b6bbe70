#include "transport/transport_backend.h"

#include "plugin/plugin_call.h"

#include <cstddef>
#include <cstring>

namespace nccom::transport {
namespace {

using ErrBuf = plugin::ErrorBuffer;
using plugin::status_name;
std::string text(const ErrBuf& b) { return plugin::error_text(b); }
// What a failed plugin call said, or its status's name when it said nothing.
std::string reason(const ErrBuf& b, nccom_plugin_status_t s) {
  return text(b).empty() ? status_name(s) : text(b);
}

// One op of a transport plugin, as the scheduler sees it.
class PluginOp : public proxy::ProxyOp {
 public:
  // what: "NAME send op"; where: "stream S, basic block B".
  PluginOp(const nccom_transport_ops_t& ops, void* op, const std::string& what,
           const std::string& where)
      : ops_(ops), op_(op), who_(what + " (" + where + ")"), what_(what) {}
  ~PluginOp() override { ops_.op_free(op_); }

  Result<proxy::Tick> progress() override {
    ErrBuf err{};
    int idle = 1;
    int done = 0;
    const nccom_plugin_status_t s = ops_.op_progress(op_, &idle, &done, err.data(), err.size());
    if (s != NCCOM_PLUGIN_OK) {
      return in_context(make_error(NRT_NETWORK_PROXY_FAILURE, reason(err, s)), what_);
    }
    return proxy::Tick{idle != 0, done != 0};
  }
  Status rearm() override {
    ErrBuf err{};
    const nccom_plugin_status_t s = ops_.op_rearm(op_, err.data(), err.size());
    if (s == NCCOM_PLUGIN_OK) return {};
    return in_context(make_error(NRT_NETWORK_PROXY_FAILURE, reason(err, s)),
                      what_ + ", re-arming it after the execution");
  }
  std::string describe() const override {
    ErrBuf buf{};
    ops_.op_describe(op_, buf.data(), buf.size());
    return who_ + " " + text(buf);
  }
  proxy::WaitTarget waiting_on() const override {
    proxy::WaitTarget target;
    if (ops_.head.struct_size < offsetof(nccom_transport_ops_t, op_waiting_on) + sizeof(void*) ||
        ops_.op_waiting_on == nullptr) {
      return target;
    }
    int peer = -1;
    int channel = -1;
    if (ops_.op_waiting_on(op_, &peer, &channel) == 1) {
      target.peer = peer;
      target.channel = channel;
    }
    if (ops_.head.struct_size >= offsetof(nccom_transport_ops_t, op_waiting_in) + sizeof(void*) &&
        ops_.op_waiting_in != nullptr) {
      ErrBuf in{};
      ops_.op_waiting_in(op_, in.data(), in.size());
      target.in = text(in);
    }
    return target;
  }

 private:
  const nccom_transport_ops_t& ops_;
  void* op_;
  std::string who_;   // for stall reports: "NAME send op (stream S, basic block B)"
  std::string what_;  // an error's context (the scheduler adds the stream and block)
};

class PluginProxyTransport : public proxy::ProxyTransport {
 public:
  PluginProxyTransport(const nccom_transport_ops_t& ops, void* ctx,
                       const nccom_transport_comm_t& comm, std::string name)
      : ops_(ops), ctx_(ctx), comm_(comm), name_(std::move(name)) {}

  Result<std::unique_ptr<proxy::ProxyOp>> make_op(proxy::Direction dir, const proxy::BlockFifos& f,
                                                  uint32_t stream, uint32_t bb) override {
    const bool send = dir == proxy::Direction::Send;
    const std::string what = name_ + (send ? " send" : " recv") + " op";
    const std::string where =
        "stream " + std::to_string(stream) + ", basic block " + std::to_string(bb);
    const std::string who = what + " (" + where + ")";
    ErrBuf err{};
    void* op = nullptr;
    const nccom_plugin_status_t s = ops_.create_op(
        ctx_, &comm_, send ? NCCOM_TRANSPORT_SEND : NCCOM_TRANSPORT_RECV, f.ops, f.ops_n,
        send ? static_cast<const void*>(f.src) : static_cast<const void*>(f.dst),
        send ? f.src_n : f.dst_n, &op, err.data(), err.size());
    if (s != NCCOM_PLUGIN_OK || op == nullptr) {
      if (op != nullptr) ops_.op_free(op);
      const std::string cause =
          s == NCCOM_PLUGIN_OK && text(err).empty() ? "no op returned" : reason(err, s);
      return in_context(make_error(s == NCCOM_PLUGIN_INVALID_ARGUMENT ? NRT_INVALID : NRT_FAILURE,
                                   "create_op failed: " + cause),
                        what + "; " + where);
    }
    return std::unique_ptr<proxy::ProxyOp>(std::make_unique<PluginOp>(ops_, op, what, where));
  }

 private:
  const nccom_transport_ops_t& ops_;
  void* ctx_;
  const nccom_transport_comm_t& comm_;
  std::string name_;
};

}  // namespace

Result<TransportBackend> TransportBackend::bind(plugin::LoadedPlugin& plugin) {
  const std::string who = "transport plugin " + plugin.name() + " (" + plugin.path().string() + ")";
  if (plugin.kind() != NCCOM_PLUGIN_KIND_TRANSPORT) {
    return make_error(NRT_INVALID, who + " is not a transport plugin");
  }
  const nccom_plugin_ops_t& head = plugin.ops();
  // op_waiting_on and later slots are read only when struct_size covers them.
  constexpr std::size_t kMinOpsSize = offsetof(nccom_transport_ops_t, op_free) + sizeof(void*);
  if (head.struct_size < kMinOpsSize) {
    return make_error(NRT_INVALID, who + ": ops struct_size " + std::to_string(head.struct_size) +
                                       " is smaller than nccom_transport_ops_t (" +
                                       std::to_string(kMinOpsSize) +
                                       "); rebuild it against this SDK");
  }
  const auto& ops = reinterpret_cast<const nccom_transport_ops_t&>(head);
  if (ops.ops_version != NCCOM_TRANSPORT_OPS_VERSION) {
    return make_error(NRT_INVALID, who + ": transport ops version " +
                                       std::to_string(ops.ops_version) + ", this host reads " +
                                       std::to_string(NCCOM_TRANSPORT_OPS_VERSION));
  }
  const char* missing = ops.can_connect == nullptr      ? "can_connect"
                        : ops.setup == nullptr          ? "setup"
                        : ops.connect == nullptr        ? "connect"
                        : ops.free_connector == nullptr ? "free_connector"
                                                        : nullptr;
  if (missing != nullptr)
    return make_error(NRT_INVALID, who + ": mandatory slot " + missing + " is NULL");
  const int op_slots = (ops.create_op != nullptr) + (ops.op_progress != nullptr) +
                       (ops.op_rearm != nullptr) + (ops.op_describe != nullptr) +
                       (ops.op_free != nullptr);
  if (op_slots != 0 && op_slots != 5) {
    return make_error(NRT_INVALID, who +
                                       ": the proxy slots (create_op, op_progress, op_rearm, "
                                       "op_describe, op_free) must be all set or all NULL; " +
                                       std::to_string(op_slots) + " of 5 are set");
  }
  if ((ops.reg_mr == nullptr) != (ops.dereg_mr == nullptr)) {
    return make_error(NRT_INVALID, who + ": reg_mr and dereg_mr must be both set or both NULL");
  }
  return TransportBackend(plugin, ops);
}

Error TransportBackend::failure(const char* call, nccom_plugin_status_t status,
                                const char* detail) const {
  return plugin::call_failure(*plugin_, "transport", call, status, detail != nullptr ? detail : "");
}

Result<bool> TransportBackend::can_connect(const nccom_transport_comm_t& comm,
                                           const nccom_transport_peer_t& me,
                                           const nccom_transport_peer_t& peer) const {
  int ok = 0;
  const nccom_plugin_status_t s = ops_->can_connect(plugin_->context(), &comm, &me, &peer, &ok);
  if (s != NCCOM_PLUGIN_OK) return failure("can_connect", s, nullptr);
  return ok != 0;
}

Result<TransportBackend::SetupResult> TransportBackend::setup(
    const nccom_transport_comm_t& comm, nccom_transport_direction_t dir, int channel,
    const nccom_transport_peer_t& peer) const {
  SetupResult out;
  ErrBuf err{};
  void* handle = nullptr;
  const nccom_plugin_status_t s = ops_->setup(plugin_->context(), &comm, dir, channel, &peer,
                                              out.blob.data(), &handle, err.data(), err.size());
  if (handle != nullptr)
    out.connector = std::make_unique<Connector>(*ops_, plugin_->context(), handle);
  if (s != NCCOM_PLUGIN_OK) return failure("setup", s, text(err).c_str());
  if (handle == nullptr)
    return failure("setup", NCCOM_PLUGIN_ERROR, "it returned OK but no connector");
  return out;
}

Result<bool> TransportBackend::connect_step(
    Connector& connector,
    const std::array<uint8_t, NCCOM_TRANSPORT_CONNECT_BYTES>& peer_blob) const {
  ErrBuf err{};
  int done = 0;
  const nccom_plugin_status_t s = ops_->connect(plugin_->context(), connector.handle(),
                                                peer_blob.data(), &done, err.data(), err.size());
  if (s != NCCOM_PLUGIN_OK) return failure("connect", s, text(err).c_str());
  return done != 0;
}

Result<void*> TransportBackend::reg_mr(Connector& connector, void* data, size_t size,
                                       int type) const {
  if (ops_->reg_mr == nullptr) {
    return make_error(NRT_INVALID,
                      "transport plugin " + name() + " registers no memory (no reg_mr)");
  }
  ErrBuf err{};
  void* mhandle = nullptr;
  const nccom_plugin_status_t s = ops_->reg_mr(plugin_->context(), connector.handle(), data, size,
                                               type, &mhandle, err.data(), err.size());
  if (s != NCCOM_PLUGIN_OK) return failure("reg_mr", s, text(err).c_str());
  return mhandle;
}

Status TransportBackend::dereg_mr(Connector& connector, void* mhandle) const {
  if (ops_->dereg_mr == nullptr) {
    return make_error(NRT_INVALID,
                      "transport plugin " + name() + " registers no memory (no dereg_mr)");
  }
  const nccom_plugin_status_t s = ops_->dereg_mr(plugin_->context(), connector.handle(), mhandle);
  if (s != NCCOM_PLUGIN_OK) return failure("dereg_mr", s, nullptr);
  return {};
}

std::unique_ptr<proxy::ProxyTransport> TransportBackend::proxy_transport(
    const nccom_transport_comm_t& comm) const {
  if (!has_proxy()) return nullptr;
  return std::make_unique<PluginProxyTransport>(*ops_, plugin_->context(), comm, name());
}

}  // namespace nccom::transport
