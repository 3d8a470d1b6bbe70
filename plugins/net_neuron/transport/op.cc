// The walk shared by both primitives (docs/internals/net-neuron-transport.md, "Op"):
// first touch, then per tick reap → (receive: early posting) → walk the FIFO
// entries the device published, in order, until one cannot be processed yet.
#include "op.h"

#include <nccom/util/log.h>

namespace nccom::net_neuron {

const char* stage_name(Stage s) {
  switch (s) {
    case Stage::None: return "NONE";
    case Stage::Recv: return "RECV";
    case Stage::RecvDone: return "RECV_DONE";
    case Stage::Flush: return "FLUSH";
    case Stage::Send: return "SEND";
    case Stage::Empty: return "EMPTY";
    case Stage::Done: return "DONE";
    case Stage::Error: return "ERROR";
  }
  return "?";
}

NetOp::~NetOp() {
  // Requests still in flight are abandoned: v6 has no cancel; the plugin
  // releases them when the comm closes.
  release_connectors();
}

Status NetOp::progress(bool* idle, bool* execution_done) {
  *idle = true;
  *execution_done = false;
  if (failed_) return *failed_;
  if (phase_ == Phase::Finished) return {};  // parked until rearm
  bool moved = false;
  Status s = step(&moved, execution_done);
  flush_signals();
  if (!s) {
    failed_ = s.error();
    return s;
  }
  *idle = !moved && !*execution_done;
  return {};
}

Status NetOp::step(bool* moved, bool* execution_done) {
  if (phase_ == Phase::FirstTouch) {
    first_touch();
    *moved = true;
  }
  if (Status s = reap(moved); !s) return s;
  if (!is_send()) {
    if (Status s = prepost(moved); !s) return s;
  }
  return walk(moved, execution_done);
}

void NetOp::first_touch() {
  phase_ = Phase::Steady;
  const EntryPlan& first = entries_[0];
  if (first.mark != EXEC_COMPLETE) enter_op(first.op);
}

// A send op grants the device its credit window when the walk reaches the op
// (first touch for the first op, the previous op's NET_OP_COMPLETE for the
// next): the device needs the credits before it can publish anything.
void NetOp::enter_op(uint32_t op) {
  if (cur_op_ == static_cast<int64_t>(op)) return;
  cur_op_ = op;
  if (is_send()) signal(ops_[op].inc_send_handshake, ops_[op].initial_send_credits);
}

void NetOp::enter_next_op_after(uint64_t i) {
  if (i + 1 < fifo_n_ && entries_[i + 1].mark != EXEC_COMPLETE) enter_op(entries_[i + 1].op);
}

Status NetOp::walk(bool* moved, bool* execution_done) {
  while (fifo_idx_ < fifo_n_) {
    const uint64_t i = fifo_idx_;
    const EntryPlan& e = entries_[i];
    if (e.word >= 0 && words_.pending(e.word) == 0) return {};  // not published yet
    if (e.mark != EXEC_COMPLETE) enter_op(e.op);
    if (e.mark == NET_TRANSFER) {
      if (i >= prepost_idx_) {
        if (in_flight() >= kRingSlots) return {};
        bool posted = false;
        Status s = is_send() ? post_send(i, &posted) : post_recv(i, &posted);
        if (!s) return s;
        if (!posted) return {};  // NULL request: the plugin is busy, retry next tick
        prepost_idx_ = i + 1;
      }
    } else if (e.mark == NET_OP_COMPLETE) {
      // The op ends once every slice of it retired (wire completion, even
      // with early_send_completion).
      if (retired_[e.op] < op_plans_[e.op].transfers) return {};
      if (!is_send()) signal(ops_[e.op].inc_recv_handshake, ops_[e.op].ending_recv_credits);
      enter_next_op_after(i);
    } else {  // EXEC_COMPLETE
      if (in_flight() != 0) return {};
      if (e.word >= 0) words_.consume(e.word);
      ++fifo_idx_;
      if (Status s = words_.reset_for_next_execution(); !s) {
        return entry_error(i, nullptr, s.error().message);
      }
      release_connectors();
      phase_ = Phase::Finished;
      ++executions_;
      *execution_done = true;
      *moved = true;
      return {};
    }
    if (e.word >= 0) words_.consume(e.word);
    ++fifo_idx_;
    *moved = true;
  }
  return {};
}

Status NetOp::claim(Connector* c) {
  // Fast path: this op already holds the connection (every post after the
  // first of an execution) — a plain load, no read-modify-write.
  if (c->owner.load(std::memory_order_acquire) == this) return {};
  const void* expected = nullptr;
  if (c->owner.compare_exchange_strong(expected, this) || expected == this) return {};
  return make_error(NRT_FAILURE, "NET_NEURON " + c->describe() +
                                     " is in use by another registered op (two streams or blocks "
                                     "posting on one connection at once would mix their slices)");
}

void NetOp::release_connectors() {
  for (Connector* c : connectors_) {
    const void* expected = this;
    c->owner.compare_exchange_strong(expected, nullptr);
  }
}

void NetOp::signal(volatile uint32_t* sem, uint32_t n) {
  flush_signals();  // slice units reaped earlier in the tick go first
  if (n != 0) comm_->inc_semaphore(sem, n);
}

void NetOp::add_signal(volatile uint32_t* sem, uint32_t n) {
  if (n == 0) return;
  if (sem != signal_sem_) flush_signals();
  signal_sem_ = sem;
  signal_n_ += n;
}

void NetOp::flush_signals() {
  if (signal_sem_ != nullptr && signal_n_ != 0) comm_->inc_semaphore(signal_sem_, signal_n_);
  signal_sem_ = nullptr;
  signal_n_ = 0;
}

Error NetOp::entry_error(uint64_t i, const Connector* c, const std::string& what) const {
  const EntryPlan& e = entries_[i];
  const net_ops_info_t& info = ops_[e.op];
  std::string who =
      c != nullptr ? c->describe() : std::string("rank ") + std::to_string(comm_->rank);
  return in_context(make_error(NRT_FAILURE, what),
                    std::string("NET_NEURON ") + (is_send() ? "send" : "receive") + " op, " + who +
                        ", " + (is_send() ? "src" : "dest") + " descriptor " + std::to_string(i) +
                        " of " + std::to_string(fifo_n_) + ", op " + std::to_string(e.op) +
                        ", func_rel_op:" + std::to_string(info.func_rel_op_idx) + ", execution " +
                        std::to_string(executions_));
}

Status NetOp::verb_error(const RequestInfo& r, const char* verb, ncclResult_t rc) const {
  return entry_error(r.fifo_idx, r.conn,
                     std::string(r.control ? "sidelink " : "") + verb + " in " +
                         net_plugin_text(comm_) + " returned " + net_result_name(rc) + " (" +
                         std::to_string(static_cast<int>(rc)) + ")");
}

Status NetOp::rearm() {
  if (failed_) return *failed_;
  if (in_flight() != 0) {
    return make_error(NRT_FAILURE, "NET_NEURON op: re-armed with " + std::to_string(in_flight()) +
                                       " requests still in flight (before EXEC_COMPLETE)");
  }
  phase_ = Phase::FirstTouch;
  posted_ = done_ = 0;
  fifo_idx_ = prepost_idx_ = 0;
  cur_op_ = -1;
  // The request ring needs no clearing: nothing is in flight, and the reaper
  // resets every slot as it retires it (clearing all 128 here was most of the
  // cost of a one-slice block, bench/proxy).
  std::fill(retired_.begin(), retired_.end(), 0u);
  release_connectors();
  return {};
}

std::string NetOp::describe() const {
  std::string text = std::string(is_send() ? "send" : "receive") + " op: execution " +
                     std::to_string(executions_) + ", descriptor " + std::to_string(fifo_idx_) +
                     " of " + std::to_string(fifo_n_);
  if (fifo_idx_ < fifo_n_) {
    const EntryPlan& e = entries_[fifo_idx_];
    const net_ops_info_t& info = ops_[e.op];
    text += " (op " + std::to_string(e.op) +
            ", func_rel_op:" + std::to_string(info.func_rel_op_idx) + ", unrolled_count " +
            std::to_string(info.unrolled_count) + ", " + std::to_string(retired_[e.op]) + "/" +
            std::to_string(op_plans_[e.op].transfers) + " slices retired";
    if (e.word >= 0) text += ", " + std::to_string(words_.pending(e.word)) + " published";
    text += ")";
  }
  text += ", " + std::to_string(in_flight()) + " requests in flight";
  if (in_flight() != 0) {
    const RequestInfo& head = ring_[done_ % kRingSlots];
    text += " (oldest: " + std::string(stage_name(head.state)) + " on " +
            (head.conn ? head.conn->describe() : std::string("?")) + ") in " +
            net_plugin_text(comm_);
  }
  return text;
}

std::string NetOp::waiting_in() const {
  if (in_flight() == 0) return {};
  const RequestInfo& head = ring_[done_ % kRingSlots];
  if (head.state != Stage::Send && head.state != Stage::Recv && head.state != Stage::Flush) {
    return {};  // done by the plugin; waiting on this transport's own step
  }
  return std::string("its oldest request (") + stage_name(head.state) + ") is in " +
         net_plugin_text(comm_);
}

bool NetOp::waiting_on(int& peer, int& channel) const {
  const Connector* conn = nullptr;
  if (in_flight() != 0) {
    conn = ring_[done_ % kRingSlots].conn;
  } else if (fifo_idx_ < fifo_n_) {
    conn = entries_[fifo_idx_].conn;
  }
  if (conn == nullptr || conn->peer < 0) return false;
  peer = conn->peer;
  channel = conn->channel;
  return true;
}

}  // namespace nccom::net_neuron
