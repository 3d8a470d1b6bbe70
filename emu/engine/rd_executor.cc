// All-reduce and all-gather by recursive doubling, for messages of one
// slice. All-reduce: log2(n)
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

#include <algorithm>
#include <vector>

namespace nrt_emu::engine {
namespace {

int largest_power_of_two(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

}  // namespace

bool Ccom::runs_recursive_doubling(const CollDesc& d) const {
  if (self_.n <= 1 || d.count == 0 || !links_->kanga_lanes().empty()) return false;
  const uint64_t bytes = d.count * dtype_size(d.dtype);
  if (d.coll == Coll::AllReduce) return bytes <= rd_max_bytes_;
  // All-gather: the whole output travels in one slice at the end.
  if (d.coll == Coll::AllGather)
    return bytes <= rd_gather_max_bytes_ / static_cast<uint64_t>(self_.n);
  return false;
}

// The partners of this rank (rank XOR 2^k below p2, and the folded pair
// r, r + p2) linked, and the plan marked as a peer plan.
Status Ccom::start_rd_plan(Plan& p, int p2) {
  const int extra = self_.n - p2;
  std::vector<int> partners;
  if (self_.rank >= p2) {
    partners.push_back(self_.rank - p2);
  } else {
    for (int bit = 1; bit < p2; bit *= 2) partners.push_back(self_.rank ^ bit);
    if (self_.rank < extra) partners.push_back(self_.rank + p2);
  }
  if (Status s = peers_->link_peers(ENC_CONNECTIVITY_RDH, partners); !s) return s;
  p.peer = true;
  p.rd = true;
  return {};
}

Status Ccom::build_rd_plan(Plan& p) {
  if (p.desc.coll == Coll::AllGather) return build_rd_gather_plan(p);
  const int p2 = largest_power_of_two(self_.n);
  const int extra = self_.n - p2;
  if (Status s = start_rd_plan(p, p2); !s) return s;
  const uint64_t elems = p.desc.count;
  // The input is the first partial result; every exchange then works on
  // the output buffer.
  p.copy_elems = elems;
  const bool avg = p.desc.op == RedOp::Avg;
  if (self_.rank >= p2) {
    const int home = self_.rank - p2;
    p.sends.push_back({home, 0, elems, 0, true});
    p.recvs.push_back({home, 0, elems, 1});
    return peers_->build_block(p);
  }
  // Each step's send reads the partial result of the steps before it, and
  // its receive may combine only once that send is out.
  if (self_.rank < extra) p.recvs.push_back({self_.rank + p2, 0, elems, 0, false, true});
  for (int bit = 1; bit < p2; bit *= 2) {
    p.sends.push_back({self_.rank ^ bit, 0, elems, p.recvs.size(), true});
    p.recvs.push_back({self_.rank ^ bit, 0, elems, p.sends.size(), false, true});
  }
  if (avg) p.recvs.back().avg = true;
  if (self_.rank < extra) p.sends.push_back({self_.rank + p2, 0, elems, p.recvs.size(), true});
  return peers_->build_block(p);
}

// All-gather by recursive doubling: at step k a rank below p2 holds the
// blocks of the 2^k ranks that share its high bits (a contiguous range of
// the output), plus those of their folded partners (another range), and
// swaps both with rank XOR 2^k. Output ranges only grow, so a receive never
// overwrites what a send reads; a send waits for the receives before it.
// The folded ranks hand in their block first and get the whole output last.
Status Ccom::build_rd_gather_plan(Plan& p) {
  const int p2 = largest_power_of_two(self_.n);
  const int extra = self_.n - p2;
  if (Status s = start_rd_plan(p, p2); !s) return s;
  const uint64_t c = p.desc.count;
  const auto block = [c](int q) { return static_cast<uint64_t>(q) * c; };
  const uint64_t all = block(self_.n);
  p.copy_src = 0;
  p.copy_dst = block(self_.rank);
  p.copy_elems = c;
  if (self_.rank >= p2) {
    const int home = self_.rank - p2;
    p.sends.push_back({home, 0, c});
    p.recvs.push_back({home, 0, all, 1});
    return peers_->build_block(p);
  }
  if (self_.rank < extra) p.recvs.push_back({self_.rank + p2, block(self_.rank + p2), c});
  for (int bit = 1; bit < p2; bit *= 2) {
    const int partner = self_.rank ^ bit;
    const uint64_t after = p.recvs.size();
    // The ranges a rank whose group starts at `base` holds before this step.
    const auto ranges = [&](int base, bool send, int peer) {
      std::vector<PeerItem>& items = send ? p.sends : p.recvs;
      items.push_back({peer, block(base), block(bit), send ? after : 0, send});
      const int folded = std::min(base + bit, extra) - base;
      if (folded > 0)
        items.push_back({peer, block(base + p2), block(folded), send ? after : 0, send});
    };
    ranges(self_.rank & ~(bit - 1), true, partner);
    ranges(partner & ~(bit - 1), false, partner);
  }
  if (self_.rank < extra) p.sends.push_back({self_.rank + p2, 0, all, p.recvs.size(), true});
  return peers_->build_block(p);
}

}  // namespace nrt_emu::engine
