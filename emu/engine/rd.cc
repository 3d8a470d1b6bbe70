// All-reduce by recursive doubling, for messages of one slice: log2(n)
// exchanges with a partner (rank XOR 2^k) instead of the ring's 2(n-1)
// dependent hops, each hop paying the device -> proxy -> plugin hand-offs.
// A rank count that is not a power of two folds: with p2 the largest power
// of two <= n, rank r >= p2 first hands its input to rank r - p2 and at the
// end receives the result from it — the partners libnccom connects for
// ENC_CONNECTIVITY_RDH. Every exchange combines the two partners' partial
// results in the same pair, so both hold bit-identical values (the
// reductions are commutative); Avg sums and divides once, on the ranks
// below p2, before the result goes back to the folded ones.
#include "ccom.h"

#include <nccom/nrt_abi.h>

namespace nrt_emu::engine {
namespace {

int largest_power_of_two(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

}  // namespace

bool Ccom::runs_recursive_doubling(const CollDesc& d) const {
  return d.coll == Coll::AllReduce && n_ > 1 && d.count > 0 && kanga_.empty() &&
         d.count * dtype_size(d.dtype) <= rd_max_bytes_;
}

Status Ccom::build_rd_plan(Plan& p) {
  const int p2 = largest_power_of_two(n_);
  const int extra = n_ - p2;
  std::vector<int> partners;
  if (rank_ >= p2) {
    partners.push_back(rank_ - p2);
  } else {
    for (int bit = 1; bit < p2; bit *= 2) partners.push_back(rank_ ^ bit);
    if (rank_ < extra) partners.push_back(rank_ + p2);
  }
  if (Status s = setup_peer_links(ENC_CONNECTIVITY_RDH, partners); !s) return s;
  p.peer = true;
  p.rd = true;
  const uint64_t elems = p.desc.count;
  // The input is the first partial result; every exchange then works on
  // the output buffer.
  p.copy_elems = elems;
  const bool avg = p.desc.op == RedOp::Avg;
  if (rank_ >= p2) {
    const int home = rank_ - p2;
    p.sends.push_back({home, 0, elems, 0, true});
    p.recvs.push_back({home, 0, elems, 1});
    return build_peer_block(p);
  }
  // Each step's send reads the partial result of the steps before it, and
  // its receive may combine only once that send is out.
  if (rank_ < extra) p.recvs.push_back({rank_ + p2, 0, elems, 0, false, true});
  for (int bit = 1; bit < p2; bit *= 2) {
    p.sends.push_back({rank_ ^ bit, 0, elems, p.recvs.size(), true});
    p.recvs.push_back({rank_ ^ bit, 0, elems, p.sends.size(), false, true});
  }
  if (avg) p.recvs.back().avg = true;
  if (rank_ < extra) p.sends.push_back({rank_ + p2, 0, elems, p.recvs.size(), true});
  return build_peer_block(p);
}

}  // namespace nrt_emu::engine
