// The Trn2/Trn3 receive confirmation (docs/decisions/net-neuron-transport.md,
// "Sidelink"). When the communicator runs with a sidelink and the net has
// RMA, a received slice is confirmed to the device only after a 4-byte iread
// from the sending peer has completed on the same connection: a read issued
// after the data arrived completes only once the peer's earlier writes to us
// are visible, so the semaphore never runs ahead of the data.
//
// What is read: each SEND connector registers a small announcement
// {magic, its own address, remote key} and sends it once, with the sidelink
// tag, before its first slice. The RECV side receives it (its own slot, ahead
// of the first slice), then reads the magic word back for every slice and
// checks it — a read that lands anything else is an error.
#include "op.h"

#include <nccom/util/log.h>

namespace nccom::net_neuron {
namespace {

constexpr uint64_t kSidelinkMagic = 0x000000014e4e534cull;  // low word "LSNN"
constexpr int kAnnounceBytes = 3 * sizeof(uint64_t);

}  // namespace

bool NetOp::sidelink_active(const Connector* c) const {
  return comm_->sidelink != 0 && c != nullptr && c->rma;
}

Status NetOp::sidelink_announce(Connector* c, uint64_t fifo_idx, bool* posted) {
  *posted = false;
  RequestInfo& r = slot(posted_);
  r = RequestInfo{};
  r.conn = c;
  r.control = true;
  r.fifo_idx = fifo_idx;
  r.net_op_idx = entries_[fifo_idx].op;
  if (c->sidelink_msg_mh == nullptr) {
    ncclResult_t rc = net_->reg_mr(net_->ctx, c->net_comm, c->sidelink_msg, sizeof c->sidelink_msg,
                                   NCCL_PTR_HOST, &c->sidelink_msg_mh);
    if (rc != ncclSuccess) return verb_error(r, "regMr", rc);
    uint64_t key = 0;
    rc = net_->get_mr_key(net_->ctx, c->sidelink_msg_mh, &key);
    if (rc != ncclSuccess) return verb_error(r, "getMrKey", rc);
    c->sidelink_msg[0] = kSidelinkMagic;
    c->sidelink_msg[1] = reinterpret_cast<uintptr_t>(&c->sidelink_msg[0]);
    c->sidelink_msg[2] = key;
  }
  void* req = nullptr;
  ncclResult_t rc = net_->isend(net_->ctx, c->net_comm, c->sidelink_msg, kAnnounceBytes,
                                kSidelinkTag, c->sidelink_msg_mh, &req);
  if (rc != ncclSuccess) return verb_error(r, "isend", rc);
  if (req == nullptr) {
    r = RequestInfo{};
    return {};
  }
  r.req = req;
  r.state = Stage::Send;
  c->sidelink_announced = true;
  ++posted_;
  *posted = true;
  return {};
}

Status NetOp::sidelink_listen(Connector* c, uint64_t fifo_idx, bool* posted) {
  *posted = false;
  RequestInfo& r = slot(posted_);
  r = RequestInfo{};
  r.conn = c;
  r.control = true;
  r.fifo_idx = fifo_idx;
  r.net_op_idx = entries_[fifo_idx].op;
  r.size = kAnnounceBytes;
  if (c->sidelink_msg_mh == nullptr) {
    ncclResult_t rc = net_->reg_mr(net_->ctx, c->net_comm, c->sidelink_msg, sizeof c->sidelink_msg,
                                   NCCL_PTR_HOST, &c->sidelink_msg_mh);
    if (rc != ncclSuccess) return verb_error(r, "regMr", rc);
    rc = net_->reg_mr(net_->ctx, c->net_comm, &c->sidelink_word, sizeof c->sidelink_word,
                      NCCL_PTR_HOST, &c->sidelink_word_mh);
    if (rc != ncclSuccess) return verb_error(r, "regMr", rc);
  }
  void* data = c->sidelink_msg;
  int size = kAnnounceBytes;
  int tag = kSidelinkTag;
  void* mhandle = c->sidelink_msg_mh;
  void* req = nullptr;
  ncclResult_t rc = net_->irecv(net_->ctx, c->net_comm, 1, &data, &size, &tag, &mhandle, &req);
  if (rc != ncclSuccess) return verb_error(r, "irecv", rc);
  if (req == nullptr) {
    r = RequestInfo{};
    return {};
  }
  r.req = req;
  r.state = Stage::Recv;
  c->sidelink_listening = true;
  ++posted_;
  *posted = true;
  return {};
}

Status NetOp::sidelink_accept(RequestInfo& r) {
  Connector* c = r.conn;
  if (r.size != kAnnounceBytes || c->sidelink_msg[0] != kSidelinkMagic) {
    return entry_error(r.fifo_idx, c,
                       "the peer's sidelink announcement is malformed (" + std::to_string(r.size) +
                           " bytes; is the peer running without a "
                           "sidelink?)");
  }
  c->sidelink_peer_addr = c->sidelink_msg[1];
  c->sidelink_peer_key = c->sidelink_msg[2];
  c->sidelink_peer_known = true;
  NCCOM_SDK_TRACE(NCCOM_SUBSYS_NET, "NET_NEURON %s: sidelink peer word at 0x%lx",
                  c->describe().c_str(), static_cast<unsigned long>(c->sidelink_peer_addr));
  return {};
}

// RECV_DONE → FLUSH: post the confirming read (waits for the announcement,
// which an earlier slot of the same connection receives).
Status NetOp::sidelink_confirm(RequestInfo& r) {
  Connector* c = r.conn;
  if (!c->sidelink_peer_known) return {};
  void* req = nullptr;
  ncclResult_t rc =
      net_->iread(net_->ctx, c->net_comm, &c->sidelink_word, sizeof c->sidelink_word,
                  c->sidelink_word_mh, c->sidelink_peer_addr, c->sidelink_peer_key, &req);
  if (rc != ncclSuccess) {
    r.state = Stage::Error;
    return verb_error(r, "iread", rc);
  }
  if (req == nullptr) return {};  // busy: retry on the next pass
  r.req = req;
  r.state = Stage::Flush;
  return {};
}

Status NetOp::sidelink_check(RequestInfo& r) {
  const uint32_t got = __atomic_load_n(&r.conn->sidelink_word, __ATOMIC_ACQUIRE);
  if (got == static_cast<uint32_t>(kSidelinkMagic)) return {};
  r.state = Stage::Error;
  return entry_error(
      r.fifo_idx, r.conn,
      "the sidelink iread returned 0x" + std::to_string(got) + " instead of the peer's magic word");
}

}  // namespace nccom::net_neuron
