// netNeuronSendProxy's posting half: one isend per published
// NET_TRANSFER src descriptor, on the connection the descriptor's op reaches
// through enc_channel->net_send->nccl_connector (or, for variable-peer ops,
// the connection to dst_rank on that channel).
#include "op.h"

#include <climits>

namespace nccom::net_neuron {

Status NetOp::post_send(uint64_t i, bool* posted) {
  *posted = false;
  const net_src_addr_t& d = src(i);
  const EntryPlan& e = entries_[i];
  const net_ops_info_t& info = ops_[e.op];
  Connector* c = e.conn;
  if (Status s = claim(c); !s) return entry_error(i, c, s.error().message);
  if (sidelink_active(c) && !c->sidelink_announced) {
    // The announcement travels first on this connection and takes its own slot.
    if (in_flight() + 2 > kRingSlots) return {};
    bool sent = false;
    if (Status s = sidelink_announce(c, i, &sent); !s) return s;
    if (!sent) return {};
  }

  const bool dynamic = info.is_dynamic_send_recv_sz;
  char* buf = static_cast<char*>(d.host_addr);
  size_t size = d.size;
  if (dynamic) {
    enc_host_mem_t* dyn = op_plans_[e.op].dyn;
    size = comm_->dynamic_send_size(dyn, info.data_type_sz, d.dst_rank, comm_->n_ranks);
    const size_t offset =
        comm_->dynamic_send_offset(dyn, info.data_type_sz, d.dst_rank, comm_->n_ranks);
    if (size > static_cast<size_t>(INT_MAX)) {
      return entry_error(
          i, c, "dynamic send size " + std::to_string(size) + " exceeds the net's int range");
    }
    buf += offset;
  }

  RequestInfo& r = slot(posted_);
  r = RequestInfo{};
  r.conn = c;
  r.addr = buf;
  r.size = static_cast<int>(size);
  r.mhandle = d.nccl_mhandle;
  r.net_op_idx = e.op;
  r.fifo_idx = i;
  r.dynamic = dynamic;
  // A statically empty slice moves nothing; a dynamic one always travels (the
  // receiver learns its size, possibly 0, from the message).
  if (!dynamic && size == 0) {
    r.state = Stage::Empty;
  } else {
    void* req = nullptr;
    ncclResult_t rc = net_->isend(net_->ctx, c->net_comm, buf, r.size, kDataTag, r.mhandle, &req);
    if (rc != ncclSuccess) return verb_error(r, "isend", rc);
    if (req == nullptr) {
      r = RequestInfo{};
      return {};
    }
    r.req = req;
    r.state = Stage::Send;
  }
  if (info.early_send_completion) {
    signal(info.inc_send_complete, 1);  // early credit: the slot retires silently
  } else {
    r.complete_report = 1;
  }
  ++posted_;
  *posted = true;
  return {};
}

}  // namespace nccom::net_neuron
