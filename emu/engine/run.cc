// Ccom::run: argument checks, the algorithm of a call, the plan cache, the
// executor a plan runs on.
#include "../runtime_log.h"
#include "ccom.h"
#include "device_words.h"

#include <algorithm>

namespace nrt_emu::engine {
namespace {

constexpr size_t kMaxPlans = 16;

bool overlaps(const void* a, size_t na, const void* b, size_t nb) {
  const auto* x = static_cast<const uint8_t*>(a);
  const auto* y = static_cast<const uint8_t*>(b);
  return na > 0 && nb > 0 && x < y + nb && y < x + na;
}

}  // namespace

Status Ccom::describe(const nrt_emu_coll_args_t& a, CollDesc* d) const {
  if (a.coll < NRT_EMU_ALL_REDUCE || a.coll > NRT_EMU_PERMUTE)
    return engine_error("unknown collective " + std::to_string(a.coll));
  if (a.dtype < NRT_EMU_INT8 || a.dtype > NRT_EMU_FP8_E5M2)
    return engine_error("unknown data type " + std::to_string(a.dtype));
  if (a.op < NRT_EMU_SUM || a.op > NRT_EMU_AVG)
    return engine_error("unknown reduction " + std::to_string(a.op));
  d->coll = static_cast<Coll>(a.coll);
  d->dtype = static_cast<DType>(a.dtype);
  d->op = static_cast<RedOp>(a.op);
  d->count = a.count;
  d->root = a.root;
  const uint64_t es = dtype_size(d->dtype);
  if (a.count > (UINT64_MAX / es) / static_cast<uint64_t>(self_.n))
    return engine_error(std::string(coll_name(d->coll)) + ": count " + std::to_string(a.count) +
                        " overflows");
  return {};
}

Status Ccom::validate(const nrt_emu_coll_args_t& a, CollDesc* d) const {
  if (Status s = describe(a, d); !s) return s;
  const std::string what = coll_name(d->coll);
  const uint64_t es = dtype_size(d->dtype);
  const uint64_t n = static_cast<uint64_t>(self_.n);
  uint64_t in = a.count, out = a.count;
  switch (d->coll) {
    case Coll::AllGather: out = a.count * n; break;
    case Coll::ReduceScatter: in = a.count * n; break;
    case Coll::AllToAll: in = out = a.count * n; break;
    default: break;
  }
  if ((d->coll == Coll::Broadcast || d->coll == Coll::Reduce) && (a.root < 0 || a.root >= self_.n))
    return engine_error(what + ": root " + std::to_string(a.root) + " is outside 0.." +
                        std::to_string(self_.n - 1));
  if (d->coll == Coll::Permute &&
      (a.send_to < -1 || a.send_to >= self_.n || a.recv_from < -1 || a.recv_from >= self_.n))
    return engine_error(what + ": send_to " + std::to_string(a.send_to) + " / recv_from " +
                        std::to_string(a.recv_from) + " outside -1.." +
                        std::to_string(self_.n - 1));
  const size_t in_bytes = in * es, out_bytes = out * es;
  const bool reads = !(d->coll == Coll::Broadcast && a.root != self_.rank) &&
                     !(d->coll == Coll::Permute && a.send_to < 0);
  const bool writes = !(d->coll == Coll::Reduce && a.root != self_.rank) &&
                      !(d->coll == Coll::Permute && a.recv_from < 0);
  if (a.count > 0) {
    if (reads && !heap_.contains(a.send, in_bytes))
      return engine_error(what + ": the send buffer is not " + std::to_string(in_bytes) +
                          " bytes of device memory from nrt_emu_ccom_alloc");
    if (writes && !heap_.contains(a.recv, out_bytes))
      return engine_error(what + ": the receive buffer is not " + std::to_string(out_bytes) +
                          " bytes of device memory from nrt_emu_ccom_alloc");
  }
  // In place: NCCL's rules; any other overlap is refused.
  const auto* s = static_cast<const uint8_t*>(a.send);
  const auto* r = static_cast<const uint8_t*>(a.recv);
  bool in_place = s == r;
  if (d->coll == Coll::AllGather)
    in_place = s == r + static_cast<uint64_t>(self_.rank) * a.count * es;
  if (d->coll == Coll::ReduceScatter)
    in_place = r == s + static_cast<uint64_t>(self_.rank) * a.count * es;
  if (d->coll == Coll::AllToAll || d->coll == Coll::Permute) in_place = false;
  if (reads && writes && !in_place && overlaps(a.send, in_bytes, a.recv, out_bytes))
    return engine_error(what + ": the send and receive buffers overlap without being in place");
  return {};
}

Result<Plan*> Ccom::plan_for(const nrt_emu_coll_args_t& a, const CollDesc& d) {
  for (auto it = plans_.begin(); it != plans_.end(); ++it) {
    const Plan& p = *it;
    if (p.desc.coll == d.coll && p.desc.dtype == d.dtype && p.desc.op == d.op &&
        p.desc.count == d.count && p.desc.root == d.root && p.send == a.send && p.recv == a.recv &&
        p.send_to == a.send_to && p.recv_from == a.recv_from) {
      plans_.splice(plans_.begin(), plans_, it);
      return &plans_.front();
    }
  }
  Plan p;
  p.desc = d;
  p.send = a.send;
  p.recv = a.recv;
  p.send_to = a.send_to;
  p.recv_from = a.recv_from;
  const Algorithm algorithm = algorithm_of(d);
  p.kanga = algorithm == Algorithm::KangaRing;
  Status built = algorithm == Algorithm::RecursiveDoubling ? rd_->build_plan(p)
                 : algorithm == Algorithm::Peer            ? peers_->build_plan(p)
                                                           : ring_->build_plan(p);
  if (!built) return built.take_error();
  plans_.push_front(std::move(p));
  while (plans_.size() > kMaxPlans) plans_.pop_back();
  // Blocks point into the FIFO vectors of the plan: fix them where it lives.
  for (auto* list : {&plans_.front().blocks, &plans_.front().peer_block}) {
    for (NetBlock& b : *list) {
      b.block = {b.op.basic_block_id,
                 &b.op,
                 1,
                 b.src.data(),
                 static_cast<int>(b.src.size()),
                 b.dst.data(),
                 static_cast<int>(b.dst.size())};
    }
  }
  return &plans_.front();
}

// The one place that decides how a call runs: plan_for builds what it
// says, and nrt_emu_ccom_algorithm reports it.
Algorithm Ccom::algorithm_of(const CollDesc& d) const {
  if (rd_->runs(d)) return Algorithm::RecursiveDoubling;
  if (d.coll == Coll::AllToAll || d.coll == Coll::Permute) return Algorithm::Peer;
  // kangaRing is for the intra-node all-gather and reduce-scatter legs,
  // as in libnrt: all-reduce (reduce-scatter + all-gather), all-gather
  // and reduce-scatter run over the lanes when there are any.
  if (!links_->kanga_lanes().empty() &&
      (d.coll == Coll::AllReduce || d.coll == Coll::AllGather || d.coll == Coll::ReduceScatter))
    return Algorithm::KangaRing;
  return Algorithm::Ring;
}

const char* algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::Ring: return "ring";
    case Algorithm::KangaRing: return "kangaring";
    case Algorithm::RecursiveDoubling: return "rd";
    case Algorithm::Peer: return "peer";
  }
  return "?";
}

NRT_STATUS Ccom::algorithm(const nrt_emu_coll_args_t& a, Algorithm* out) {
  CollDesc d;
  if (Status s = describe(a, &d); !s) return fail(NRT_INVALID, s.error().message);
  *out = algorithm_of(d);
  return NRT_SUCCESS;
}

// The executor of a plan: recursive doubling's, the peers', or the rings'.
Status Ccom::execute(Plan& p) {
  if (p.rd) return rd_->execute(p, executions_);
  if (p.peer) return peers_->execute(p, executions_);
  return ring_->execute(p, executions_);
}

NRT_STATUS Ccom::run(const nrt_emu_coll_args_t& a) {
  if (broken_)
    return fail(NRT_FAILURE, "an earlier collective failed (" + broken_reason_ +
                                 "); close and re-create the communicator");
  CollDesc d;
  if (Status s = validate(a, &d); !s) return fail(NRT_INVALID, s.error().message);
  auto planned = plan_for(a, d);
  if (!planned) {
    // A first plan may connect peers (libnccom's bootstrap): a dead peer
    // fails it wherever the bootstrap's ring happens to notice.
    const std::string gone = loop_->peer_gone();
    return fail(planned.error().status,
                planned.error().message + (gone.empty() ? "" : "; " + gone));
  }
  Plan* p = *planned;
  if (Status s = execute(*p); !s) {
    const std::string e = s.error().message;
    broken_ = true;
    broken_reason_ = e;
    // Every failed execution ends with this rank's call: side by side, the
    // ranks' lines show whether their calls differ (across hosts, slices of
    // another size fail in the net plugin or the transport before any stamp
    // can be read).
    return fail(NRT_FAILURE, std::string(coll_name(d.coll)) + " (execution " +
                                 std::to_string(executions_) + "): " + e + "; this rank runs " +
                                 describe_stamp(stamp_of(*p, executions_)));
  }
  ++p->uses;
  ++executions_;
  return NRT_SUCCESS;
}

}  // namespace nrt_emu::engine
