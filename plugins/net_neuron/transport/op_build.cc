// NetOp::create — resolves a registered FIFO once, so that the per-tick walk
// never dereferences anything it has not checked: every op's channel,
// connection, index words, semaphores and dynamic-size input, and every
// entry's mark, op index and connection.
#include "op.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>

namespace nccom::net_neuron {
namespace {

template <class Entry>
uint32_t raw_mark(const Entry& e) {
  uint32_t m = 0;
  std::memcpy(&m, &e.mark, sizeof m);  // never load an unchecked enum value
  return m;
}

Error refuse(nccom_transport_direction_t dir, const std::string& what) {
  return make_error(NRT_INVALID, std::string("NET_NEURON ") +
                                     (dir == NCCOM_TRANSPORT_SEND ? "send" : "receive") +
                                     " op: " + what);
}

}  // namespace

// The first entry of an op in this FIFO: its semaphores, and for dynamic
// sizes the callbacks and input they need.
Status NetOp::first_use(OpPlan& opp, const net_ops_info_t& info, const enc_net_connector_t* nc,
                        const std::string& op_at) {
  const bool send = is_send();
  opp.used = true;
  volatile uint32_t* need[2] = {send ? info.inc_send_handshake : info.inc_recv_handshake,
                                send ? info.inc_send_complete : info.inc_recv_complete};
  if (need[0] == nullptr || need[1] == nullptr) {
    return refuse(dir_, op_at + std::string(": inc_") + (send ? "send" : "recv") +
                            "_handshake or inc_" + (send ? "send" : "recv") + "_complete is NULL");
  }
  if (info.is_dynamic_send_recv_sz) {
    const bool callbacks = send ? (comm_->dynamic_send_size && comm_->dynamic_send_offset)
                                : (comm_->dynamic_recv_offset && comm_->set_recv_size);
    if (!callbacks || nc->dynamic_input_host_mem == nullptr || info.data_type_sz == 0) {
      return refuse(dir_, op_at +
                              ": dynamic sizes need the comm's dynamic-size callbacks, "
                              "the connector's dynamic_input_host_mem and data_type_sz");
    }
    opp.dyn = &nc->dynamic_input_host_mem->mem;
  }
  return {};
}

// The connection a NET_TRANSFER entry travels on: for a variable peer, the
// communicator's (mesh first on a MESH channel); otherwise the channel's
// own connector, which must be a live, connected one of this communicator.
Result<Connector*> NetOp::connection_of(const ConnectorRegistry& registry,
                                        const net_ops_info_t& info, const enc_channel_prefix_t* ch,
                                        const enc_net_connector_t* nc, int peer_rank,
                                        const std::string& op_at) const {
  Connector* c = nullptr;
  if (info.variable_peer) {
    // A MESH channel's peers are the communicator's mesh connections
    // (transport channel kMeshChannel, neuronExpandConnectivity); otherwise,
    // or without one, the connection on the channel's own id
    // (docs/decisions/net-neuron-transport.md).
    if (ch->pattern == ENC_PATTERN_MESH) c = registry.find(comm_, dir_, kMeshChannel, peer_rank);
    if (c == nullptr) c = registry.find(comm_, dir_, ch->id, peer_rank);
    if (c == nullptr) {
      return refuse(dir_, op_at + ": variable peer rank " + std::to_string(peer_rank) +
                              " has no NET_NEURON connection on channel " + std::to_string(ch->id) +
                              (ch->pattern == ENC_PATTERN_MESH
                                   ? " nor a mesh connection (neuronExpandConnectivity)"
                                   : ""));
    }
  } else {
    c = static_cast<Connector*>(nc->nccl_connector);
    if (!registry.contains(c)) {
      return refuse(dir_, op_at + ": enc_channel's nccl_connector " +
                              std::to_string(reinterpret_cast<uintptr_t>(c)) +
                              " is not a live NET_NEURON connector");
    }
    if (c->comm != comm_ || c->dir != dir_) {
      return refuse(dir_, op_at + ": nccl_connector (" + c->describe() +
                              ") belongs to another communicator or direction");
    }
  }
  if (!c->connected) return refuse(dir_, op_at + ": " + c->describe() + " is not connected");
  return c;
}

// Entry i's mark against the walk so far: EXEC_COMPLETE last and only last,
// each op's entries contiguous and closed once. `exec_complete` is set for
// the last entry, which the walk then plans by itself.
Status NetOp::check_mark(uint64_t i, const std::string& at, uint32_t op_idx, const Walk& w) const {
  const uint32_t mark = entries_[i].mark;
  if (mark > EXEC_COMPLETE) return refuse(dir_, at + " has mark " + std::to_string(mark));
  if ((mark == EXEC_COMPLETE) != (i + 1 == fifo_n_)) {
    return refuse(dir_, at + ": EXEC_COMPLETE must be the last entry and only the last");
  }
  if (mark == EXEC_COMPLETE) {
    if (w.open_op < 0) return {};
    return refuse(dir_, at + ": EXEC_COMPLETE while op " + std::to_string(w.open_op) +
                            " has transfers but no NET_OP_COMPLETE");
  }
  if (op_idx >= static_cast<uint32_t>(ops_n_)) {
    return refuse(dir_, at + ".net_op_idx " + std::to_string(op_idx) + " is not below ops_n " +
                            std::to_string(ops_n_));
  }
  if (op_plans_[op_idx].closed) {
    return refuse(dir_,
                  at + ": op " + std::to_string(op_idx) + " appears after its NET_OP_COMPLETE");
  }
  if (w.open_op >= 0 && w.open_op != static_cast<int64_t>(op_idx)) {
    return refuse(dir_, at + ": op " + std::to_string(op_idx) + " starts while op " +
                            std::to_string(w.open_op) + " has no NET_OP_COMPLETE yet");
  }
  return {};
}

// Entry i of the FIFO resolved: its op, the index word that publishes it and,
// for a NET_TRANSFER, its connection.
Status NetOp::plan_entry(const ConnectorRegistry& registry, uint64_t i, Walk& w) {
  const bool send = is_send();
  const std::string at = std::string(send ? "src" : "dest") + "[" + std::to_string(i) + "]";
  EntryPlan& plan = entries_[i];
  plan.mark = send ? raw_mark(src(i)) : raw_mark(dst(i));
  const uint32_t op_idx = send ? src(i).net_op_idx : dst(i).net_op_idx;
  if (Status s = check_mark(i, at, op_idx, w); !s) return s;
  if (plan.mark == EXEC_COMPLETE) {
    plan.op = w.last_op;
    plan.word = w.last_word;  // published on the last op's words (-1: nothing to wait for)
    return {};
  }
  w.open_op = plan.mark == NET_OP_COMPLETE ? -1 : static_cast<int64_t>(op_idx);
  if (plan.mark == NET_OP_COMPLETE) op_plans_[op_idx].closed = true;
  plan.op = w.last_op = op_idx;
  const net_ops_info_t& info = ops_[op_idx];
  const std::string op_at = at + " (op " + std::to_string(op_idx) +
                            ", func_rel_op:" + std::to_string(info.func_rel_op_idx) + ")";
  const auto* ch = static_cast<const enc_channel_prefix_t*>(info.enc_channel);
  if (ch == nullptr) return refuse(dir_, op_at + ": enc_channel is NULL");
  if (ch->pattern != ENC_PATTERN_RING && ch->pattern != ENC_PATTERN_MESH) {
    return refuse(dir_, op_at + ": enc_channel pattern " +
                            std::to_string(static_cast<int>(ch->pattern)) +
                            " is neither RING (0) nor MESH (1)");
  }
  const enc_net_connector_t* nc = send ? ch->net_send : ch->net_recv;
  if (nc == nullptr) {
    return refuse(dir_, op_at + std::string(": enc_channel->") + (send ? "net_send" : "net_recv") +
                            " is NULL");
  }
  auto word = words_.add(nc, send, info.net_idx_loop_size, op_at);
  if (!word) return word.take_error();
  plan.word = w.last_word = *word;
  OpPlan& opp = op_plans_[op_idx];
  if (!opp.used) {
    if (Status s = first_use(opp, info, nc, op_at); !s) return s;
  }
  if (plan.mark == NET_OP_COMPLETE) return {};
  ++opp.transfers;
  const int peer_rank = send ? src(i).dst_rank : dst(i).src_rank;
  const uint32_t size = send ? src(i).size : dst(i).size;
  if (size > static_cast<uint32_t>(INT_MAX)) {
    return refuse(dir_, op_at + ": size " + std::to_string(size) + " exceeds the net's int range");
  }
  if (send && src(i).dst_mhandle != nullptr) {
    return refuse(dir_, op_at +
                            ": names a remote registration (dst_mhandle); the send-side "
                            "RMA read path (the original's remote read) is not implemented");
  }
  auto c = connection_of(registry, info, ch, nc, peer_rank, op_at);
  if (!c) return c.take_error();
  plan.conn = *c;
  if (std::find(connectors_.begin(), connectors_.end(), *c) == connectors_.end())
    connectors_.push_back(*c);
  return {};
}

Result<NetOp*> NetOp::create(const ConnectorRegistry& registry, const nccom_transport_comm_t* comm,
                             nccom_transport_direction_t dir, const net_ops_info_t* ops, int ops_n,
                             const void* fifo, int fifo_n) {
  if (dir != NCCOM_TRANSPORT_SEND && dir != NCCOM_TRANSPORT_RECV) {
    return refuse(dir, "direction " + std::to_string(static_cast<int>(dir)) + " is invalid");
  }
  if (comm == nullptr || net_of(comm) == nullptr || comm->inc_semaphore == nullptr) {
    return refuse(dir, "the communicator lends no net plugin or no inc_semaphore callback");
  }
  if (ops == nullptr || ops_n <= 0 || fifo == nullptr || fifo_n <= 0) {
    return refuse(dir, "empty ops or address FIFO (ops_n " + std::to_string(ops_n) + ", fifo_n " +
                           std::to_string(fifo_n) + ")");
  }
  std::unique_ptr<NetOp> op(new NetOp());
  op->comm_ = comm;
  op->net_ = net_of(comm);
  op->dir_ = dir;
  op->ops_ = ops;
  op->ops_n_ = ops_n;
  op->fifo_ = fifo;
  op->fifo_n_ = static_cast<uint64_t>(fifo_n);
  op->entries_.resize(op->fifo_n_);
  op->op_plans_.resize(static_cast<size_t>(ops_n));
  op->retired_.assign(static_cast<size_t>(ops_n), 0);
  Walk w;
  for (uint64_t i = 0; i < op->fifo_n_; ++i) {
    if (Status s = op->plan_entry(registry, i, w); !s) return s.take_error();
  }
  return op.release();
}

}  // namespace nccom::net_neuron
