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
#include "rd_executor.h"

#include "../runtime_log.h"

#include <nccom/nrt_abi.h>

#include <algorithm>
#include <vector>

namespace nrt_emu::engine {
namespace {

// All-reduce up to this size runs recursive doubling, by default (measured
// in docs/decisions/emu-engine.md): across hosts each ring hop pays the
// proxy and the network; on one host a hop is a copy, but each is also a
// hand-off between ranks, and 2(n-1) of them lose to log2(n) swaps up to
// 32 KiB.
constexpr uint64_t kRdBytesAcrossHosts = 64u << 10;
constexpr uint64_t kRdBytesOneHost = 32u << 10;
// All-gather up to this output size, likewise (measured there too): across
// hosts the ring's n-1 forwarding hops each wait for the network, and
// recursive doubling's log2(n) swaps win up to 64 KiB (past it the last
// swap's half of the output no longer goes eagerly); on one host it wins up
// to 8 KiB with 2 ranks and 32 KiB with more.
constexpr uint64_t kRdGatherBytesAcrossHosts = 64u << 10;
constexpr uint64_t kRdGatherBytesOneHostPair = 8u << 10;
constexpr uint64_t kRdGatherBytesOneHost = 32u << 10;

int largest_power_of_two(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

}  // namespace

void RdExecutor::choose_limits(bool across_hosts) {
  if (limits_.allreduce == kAuto)
    limits_.allreduce = across_hosts ? kRdBytesAcrossHosts : kRdBytesOneHost;
  limits_.allreduce = std::min<uint64_t>(limits_.allreduce, self_.slot_bytes - kStampBytes);
  if (limits_.allgather == kAuto)
    limits_.allgather = across_hosts   ? kRdGatherBytesAcrossHosts
                        : self_.n == 2 ? kRdGatherBytesOneHostPair
                                       : kRdGatherBytesOneHost;
  limits_.allgather = std::min<uint64_t>(limits_.allgather, self_.slot_bytes - kStampBytes);
  const auto log_choice = [this](const char* coll, uint64_t max, const char* knob) {
    if (self_.n <= 1) return;
    if (max == 0 || !links_.kanga_lanes().empty()) {
      nrt_emu::log::message(
          nrt_emu::log::Level::Info, "[engine rank %d] %s: the rings at every size (%s%s)",
          self_.rank, coll,
          links_.kanga_lanes().empty() ? knob : "kangaRing lanes run the small ones too",
          links_.kanga_lanes().empty() ? "=0" : "");
      return;
    }
    nrt_emu::log::message(nrt_emu::log::Level::Info,
                          "[engine rank %d] %s of 1..%llu bytes: recursive doubling over the RDH "
                          "peers; larger: the rings (%s)",
                          self_.rank, coll, static_cast<unsigned long long>(max), knob);
  };
  log_choice("all-reduce", limits_.allreduce, "NEURON_RT_EMU_ALLREDUCE_RD_BYTES");
  log_choice("all-gather (output)", limits_.allgather, "NEURON_RT_EMU_ALLGATHER_RD_BYTES");
}

Status RdExecutor::execute(Plan& p, uint64_t execution) {
  Status s = peers_.execute(p, execution);
  if (s) ++executions_;
  return s;
}

bool RdExecutor::runs(const CollDesc& d) const {
  if (self_.n <= 1 || d.count == 0 || !links_.kanga_lanes().empty()) return false;
  const uint64_t bytes = d.count * dtype_size(d.dtype);
  if (d.coll == Coll::AllReduce) return bytes <= limits_.allreduce;
  // All-gather: the whole output travels in one slice at the end.
  if (d.coll == Coll::AllGather) return bytes <= limits_.allgather / static_cast<uint64_t>(self_.n);
  return false;
}

// The partners of this rank (rank XOR 2^k below p2, and the folded pair
// r, r + p2) linked, and the plan marked as a peer plan.
Status RdExecutor::start_plan(Plan& p, int p2) {
  const int extra = self_.n - p2;
  std::vector<int> partners;
  if (self_.rank >= p2) {
    partners.push_back(self_.rank - p2);
  } else {
    for (int bit = 1; bit < p2; bit *= 2) partners.push_back(self_.rank ^ bit);
    if (self_.rank < extra) partners.push_back(self_.rank + p2);
  }
  if (Status s = peers_.link_peers(ENC_CONNECTIVITY_RDH, partners); !s) return s;
  p.peer = true;
  p.rd = true;
  return {};
}

Status RdExecutor::build_plan(Plan& p) {
  if (p.desc.coll == Coll::AllGather) return build_gather_plan(p);
  const int p2 = largest_power_of_two(self_.n);
  const int extra = self_.n - p2;
  if (Status s = start_plan(p, p2); !s) return s;
  const uint64_t elems = p.desc.count;
  // The input is the first partial result; every exchange then works on
  // the output buffer.
  p.copy_elems = elems;
  const bool avg = p.desc.op == RedOp::Avg;
  if (self_.rank >= p2) {
    const int home = self_.rank - p2;
    p.sends.push_back({home, 0, elems, 0, true});
    p.recvs.push_back({home, 0, elems, 1});
    return peers_.build_block(p);
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
  return peers_.build_block(p);
}

// All-gather by recursive doubling: at step k a rank below p2 holds the
// blocks of the 2^k ranks that share its high bits (a contiguous range of
// the output), plus those of their folded partners (another range), and
// swaps both with rank XOR 2^k. Output ranges only grow, so a receive never
// overwrites what a send reads; a send waits for the receives before it.
// The folded ranks hand in their block first and get the whole output last.
Status RdExecutor::build_gather_plan(Plan& p) {
  const int p2 = largest_power_of_two(self_.n);
  const int extra = self_.n - p2;
  if (Status s = start_plan(p, p2); !s) return s;
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
    return peers_.build_block(p);
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
  return peers_.build_block(p);
}

}  // namespace nrt_emu::engine
