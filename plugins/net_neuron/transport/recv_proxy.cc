// netNeuronRecvProxy's posting half: one irecv (n = 1) per
// NET_TRANSFER dest descriptor, either when the device publishes it or, for
// ops with early_recv_posting, ahead of publication (pre_post_fifo_idx).
#include "op.h"

#include <algorithm>

namespace nccom::net_neuron {

Status NetOp::post_recv(uint64_t i, bool* posted) {
  *posted = false;
  const net_dest_addr_t& d = dst(i);
  const EntryPlan& e = entries_[i];
  const net_ops_info_t& info = ops_[e.op];
  Connector* c = e.conn;
  if (Status s = claim(c); !s) return entry_error(i, c, s.error().message);
  if (sidelink_active(c) && !c->sidelink_listening) {
    if (in_flight() + 2 > kRingSlots) return {};
    bool listening = false;
    if (Status s = sidelink_listen(c, i, &listening); !s) return s;
    if (!listening) return {};
  }

  const bool dynamic = info.is_dynamic_send_recv_sz;
  char* buf = static_cast<char*>(d.host_addr);
  if (dynamic) {
    buf += comm_->dynamic_recv_offset(op_plans_[e.op].dyn, info.data_type_sz, d.src_rank,
                                      comm_->n_ranks);
  }
  RequestInfo& r = slot(posted_);
  r = RequestInfo{};
  r.conn = c;
  r.addr = buf;
  r.size = static_cast<int>(d.size);  // capacity; the completion says what arrived
  r.expected = dynamic ? -1 : static_cast<int>(d.size);
  r.mhandle = d.nccl_mhandle;
  r.net_op_idx = e.op;
  r.fifo_idx = i;
  r.dynamic = dynamic;
  r.complete_report = 1;
  if (!dynamic && d.size == 0) {
    r.state = Stage::Empty;
  } else {
    void* data = buf;
    int size = r.size;
    int tag = kDataTag;
    void* mhandle = r.mhandle;
    void* req = nullptr;
    ncclResult_t rc = net_->irecv(net_->ctx, c->net_comm, 1, &data, &size, &tag, &mhandle, &req);
    if (rc != ncclSuccess) return verb_error(r, "irecv", rc);
    if (req == nullptr) {
      r = RequestInfo{};
      return {};
    }
    r.req = req;
    r.state = Stage::Recv;
  }
  ++posted_;
  *posted = true;
  return {};
}

// Early posting applies to static slices of ops with early_recv_posting: a
// dynamic slice's offset is only valid once the device published it.
bool NetOp::can_prepost(uint64_t i) const {
  const net_ops_info_t& info = ops_[entries_[i].op];
  return info.early_recv_posting && !info.is_dynamic_send_recv_sz;
}

Status NetOp::prepost(bool* moved) {
  uint64_t i = std::max(prepost_idx_, fifo_idx_);
  while (i < fifo_n_ && in_flight() < kRingSlots) {
    const EntryPlan& e = entries_[i];
    if (e.mark == EXEC_COMPLETE) break;
    if (e.mark == NET_OP_COMPLETE) {
      ++i;
      continue;
    }
    if (!can_prepost(i)) break;
    bool posted = false;
    if (Status s = post_recv(i, &posted); !s) return s;
    if (!posted) break;
    *moved = true;
    ++i;
  }
  // Everything NET_TRANSFER in [fifo_idx_, i) is posted now.
  prepost_idx_ = std::max(prepost_idx_, i);
  return {};
}

}  // namespace nccom::net_neuron
