// pollPosted, the original's reaper: test every request in flight, move it
// through its reqStage states, and retire slots strictly in posting order, each
// exactly once: its semaphore unit, its dynamic receive size, its op's count.
//
//   send:    SEND --test done--> DONE
//   receive: RECV --test done--> RECV_DONE --(sidelink: iread)--> FLUSH --> DONE
//   empty:   EMPTY (zero-size static slice, no request)
#include "op.h"

namespace nccom::net_neuron {

namespace {

// Connections one pass tracks as waiting; past that the pass stops early
// (the rest are tested next pass), which only costs time.
constexpr size_t kMaxBlocked = 64;

bool awaits_test(const RequestInfo& r) {
  return r.state == Stage::Send || r.state == Stage::Recv || r.state == Stage::Flush;
}

}  // namespace

// Requests are tested in posting order and, per connection, only up to the
// first one that is not done: a plugin may require that its requests be
// tested oldest first (NCCL's proxy always tests the oldest, and plugins
// derived from NCCL's socket code read the stream into whichever request is
// tested). Requests of other connections behind it are still tested. Slots
// retire strictly in posting order.
Status NetOp::reap(bool* moved) {
  const Connector* blocked[kMaxBlocked];
  size_t n_blocked = 0;
  auto is_blocked = [&](const Connector* c) {
    for (size_t i = 0; i < n_blocked; ++i) {
      if (blocked[i] == c) return true;
    }
    return false;
  };
  for (uint64_t k = done_; k < posted_; ++k) {
    RequestInfo& r = slot(k);
    if (!awaits_test(r)) {
      if (r.state == Stage::RecvDone) {  // a sidelink step, no request of its own yet
        if (Status s = test_slot(r, moved); !s) return s;
      }
      continue;
    }
    if (is_blocked(r.conn)) continue;
    if (Status s = test_slot(r, moved); !s) return s;
    if (awaits_test(r)) {
      if (n_blocked == kMaxBlocked) break;  // every connection we can track waits
      blocked[n_blocked++] = r.conn;
    }
  }
  while (done_ < posted_) {
    RequestInfo& r = slot(done_);
    if (r.state != Stage::Done && r.state != Stage::Empty) break;
    retire(r);
    r = RequestInfo{};
    ++done_;
    *moved = true;
  }
  return {};
}

Status NetOp::test_slot(RequestInfo& r, bool* moved) {
  int done = 0;
  switch (r.state) {
    case Stage::Send: {
      int unused = 0;  // a plugin may leave sizes unwritten for sends
      ncclResult_t rc = net_->test(net_->ctx, r.req, &done, &unused);
      if (rc != ncclSuccess) {
        r.state = Stage::Error;
        return verb_error(r, "test (send)", rc);
      }
      if (done == 0) return {};
      r.req = nullptr;
      r.state = Stage::Done;
      *moved = true;
      return {};
    }
    case Stage::Recv: {
      int size = NCCOM_NET_SIZE_UNREPORTED;
      ncclResult_t rc = net_->test(net_->ctx, r.req, &done, &size);
      if (rc != ncclSuccess) {
        r.state = Stage::Error;
        return verb_error(r, "test (receive)", rc);
      }
      if (done == 0) return {};
      r.req = nullptr;
      *moved = true;
      if (Status s = received_size(r, size); !s) {
        r.state = Stage::Error;
        return s;
      }
      if (r.control) {
        if (Status s = sidelink_accept(r); !s) return s;
        r.state = Stage::Done;
        return {};
      }
      r.state = Stage::RecvDone;
      [[fallthrough]];
    }
    case Stage::RecvDone:
      if (!sidelink_active(r.conn)) {
        r.state = Stage::Done;
        return {};
      }
      return sidelink_confirm(r);
    case Stage::Flush: {
      int unused = 0;
      ncclResult_t rc = net_->test(net_->ctx, r.req, &done, &unused);
      if (rc != ncclSuccess) {
        r.state = Stage::Error;
        return verb_error(r, "test (sidelink iread)", rc);
      }
      if (done == 0) return {};
      r.req = nullptr;
      *moved = true;
      if (Status s = sidelink_check(r); !s) return s;
      r.state = Stage::Done;
      return {};
    }
    default: return {};
  }
}

// What a completed receive says it received. The size is relied on only
// where nothing else tells it: a plugin may leave it unwritten (NVIDIA's
// layouts never promised it) and a receive whose length the descriptor fixes
// then takes that length; a dynamic receive's length only the plugin knows.
// A size the plugin did write is checked, and a wrong one is named as the
// plugin's report: which side is wrong, each rank's failure line tells (its
// collective), not this one.
Status NetOp::received_size(RequestInfo& r, int size) const {
  if (r.control) {  // the sidelink announcement: sidelink_accept checks it
    if (size != NCCOM_NET_SIZE_UNREPORTED) r.size = size;
    return {};
  }
  if (size == NCCOM_NET_SIZE_UNREPORTED) {
    if (r.expected >= 0) {
      r.size = r.expected;
      return {};
    }
    return entry_error(
        r.fifo_idx, r.conn,
        net_plugin_text(comm_) +
            " completed a receive without reporting its size (test left sizes[0] "
            "unwritten); this receive's length is dynamic, set by the sender, so only the "
            "plugin can tell it. A plugin of NVIDIA's layouts need not report sizes, one of "
            "the Neuron layouts must: use a plugin that writes the received size in test");
  }
  if (size < 0 || size > r.size || (r.expected >= 0 && size != r.expected)) {
    return entry_error(
        r.fifo_idx, r.conn,
        net_plugin_text(comm_) + " reported " + std::to_string(size) +
            " bytes received for a receive that " +
            (r.expected >= 0 ? "expects " : "has room for ") + std::to_string(r.size) +
            (size > r.size ? " (more than the buffer holds: the plugin wrote past it, or "
                             "misreports sizes)"
                           : "") +
            ": either the plugin misreports received sizes or the sender posted another size "
            "(when every rank's failure names the same collective call, it is the plugin)");
  }
  r.size = size;
  return {};
}

void NetOp::retire(RequestInfo& r) {
  if (r.control) return;  // the sidelink announcement is not a slice
  const net_ops_info_t& info = ops_[r.net_op_idx];
  if (!is_send() && r.dynamic) {
    comm_->set_recv_size(op_plans_[r.net_op_idx].dyn, static_cast<size_t>(r.size),
                         info.data_type_sz, dst(r.fifo_idx).src_rank, comm_->n_ranks);
  }
  add_signal(is_send() ? info.inc_send_complete : info.inc_recv_complete, r.complete_report);
  ++retired_[r.net_op_idx];
}

}  // namespace nccom::net_neuron
