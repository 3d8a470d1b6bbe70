// program.h — what one rank's device does for one collective, per channel.
//
// A collective becomes, on every engine channel, a list of slice steps over
// the channel's ring (receive from prev, send to next). Each step moves one
// slice of at most `slice_elems` elements:
//
//   value = RECV ? (REDUCE ? received ⊕ input[src] : received) : input[src]
//   if AVG:  value = value / rank_n            (the rank that completes a sum)
//   if dst:  output[dst] = value
//   if SEND: next rank receives value
//
// The k-th SEND of a rank on a channel is the k-th RECV of its ring
// successor on that channel: both build the same round structure, so slice
// sizes always agree. Pure computation, no I/O — unit-tested on its own by
// executing programs of every rank in memory (tests/e2e/engine, ProgramSim).
#pragma once

#include "dtype.h"
#include "status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nrt_emu::engine {

enum class Coll : int {
  AllReduce = 0,
  AllGather,
  ReduceScatter,
  Broadcast,
  Reduce,
  AllToAll,
  Permute
};
const char* coll_name(Coll c);

enum StepFlags : uint32_t {
  kRecv = 1u << 0,
  kSend = 1u << 1,
  kReduce = 1u << 2,  // with kRecv: combine the received slice with input[src]
  kAvg = 1u << 3,     // value /= rank_n (only with RedOp::Avg)
};

struct Step {
  uint32_t flags = 0;
  int64_t src = -1;    // element offset into the input buffer, -1 = none
  int64_t dst = -1;    // element offset into the output buffer, -1 = none
  uint64_t elems = 0;  // slice length (may be 0: the slice still travels)
};

struct ChannelProgram {
  std::vector<Step> steps;
  uint64_t sends = 0;  // steps with kSend
  uint64_t recvs = 0;  // steps with kRecv
};

struct CollDesc {
  Coll coll = Coll::AllReduce;
  DType dtype = DType::Fp32;
  RedOp op = RedOp::Sum;
  uint64_t count = 0;  // elements, as nrt_emu_coll_args_t.count
  int root = 0;        // rank
};

// The ring of one channel: order[q] = rank at ring position q (rank_n
// entries, a permutation), pos = this rank's position.
struct Ring {
  std::vector<int> order;
  int pos = 0;
};

// The ring of a kangaRing lane from libnccom's path (nccl_comm_info_t.
// kangaring_paths[k]: up to `max_len` ranks, -1 padded), kept in the order
// given — each lane starts at its own rotation, and every rank indexes the
// positions alike because all hold the same path. Errors (the ring is then
// empty) name the entry: a rank outside 0..rank_n-1 or listed twice, a rank
// after the padding, a path that is not all rank_n ranks, `rank` missing.
Status ring_from_path(const int* path, int max_len, int rank_n, int rank, Ring* out);

// Element offsets of the input / output buffers relative to what the caller
// passed are already resolved: src offsets index the input buffer, dst the
// output buffer, both in elements of desc.dtype.
//
// `first`/`last`: this channel's share of the work in elements of the
// split dimension (AllReduce/Broadcast/Reduce: the buffer; AllGather: the
// per-rank block; ReduceScatter: the per-rank output block).
// Errors (an operation rings cannot run, a bad root) come back as a message;
// the program is then empty.
Status build_ring_program(const CollDesc& desc, const Ring& ring, int rank, uint64_t first,
                          uint64_t last, uint64_t slice_elems, ChannelProgram* out);

// Splits [0, total) into `channels` contiguous ranges, each a multiple of
// `align` elements except the last; empty ranges are allowed.
std::vector<std::pair<uint64_t, uint64_t>> split_channels(uint64_t total, int channels,
                                                          uint64_t align);

// The split dimension of a collective (see build_ring_program).
uint64_t split_total(const CollDesc& desc);

}  // namespace nrt_emu::engine
