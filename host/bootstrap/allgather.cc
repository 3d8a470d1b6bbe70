#include "bootstrap/allgather.h"

#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <string>

namespace nccom::bootstrap {
namespace {

constexpr std::size_t kRingSliceBytes = std::size_t{64} << 10;  // 64 KiB: bandwidth-bound
constexpr int kRingMaxRanks = 4;

bool is_power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

// ceil(log2 n) for n >= 1.
int ceil_log2(int n) {
  int rounds = 0;
  while ((int64_t{1} << rounds) < n) ++rounds;
  return rounds;
}

// The schedules below address slices by index; this keeps null + 0 (a valid
// call with size_per_rank 0 and no buffer) out of pointer arithmetic.
class Slices {
 public:
  Slices(uint8_t* base, std::size_t size) : base_(base), size_(size) {}
  uint8_t* at(int index) const {
    return base_ == nullptr ? nullptr : base_ + static_cast<std::size_t>(index) * size_;
  }
  std::size_t bytes(int count) const { return static_cast<std::size_t>(count) * size_; }

 private:
  uint8_t* base_;
  std::size_t size_;
};

// One round of a schedule: the transport's error, if any, with the context a
// reader needs to find the failing link. The inner status is kept.
Status exchange_round(PeerExchange& transport, AllGatherAlgorithm algorithm, int round, int send_to,
                      const void* send_data, std::size_t send_size, int recv_from, void* recv_data,
                      std::size_t recv_size) {
  Status status = transport.exchange(send_to, send_data, send_size, recv_from, recv_data, recv_size,
                                     algorithm_msg_type(algorithm));
  if (status) return status;
  return in_context(status.take_error(), std::string("all-gather (") + algorithm_name(algorithm) +
                                             ") round " + std::to_string(round) + " with ranks " +
                                             std::to_string(send_to) + "/" +
                                             std::to_string(recv_from));
}

// s = 0 .. n-2: pass slice (rank - s) on to the successor, take slice
// (rank - s - 1) from the predecessor.
Status ring(PeerExchange& transport, int rank, int n, const Slices& slices) {
  const int next = (rank + 1) % n;
  const int prev = (rank - 1 + n) % n;
  for (int s = 0; s < n - 1; ++s) {
    const int send_slice = (rank - s + n) % n;
    const int recv_slice = (rank - s - 1 + 2 * n) % n;
    Status status =
        exchange_round(transport, AllGatherAlgorithm::kRing, s, next, slices.at(send_slice),
                       slices.bytes(1), prev, slices.at(recv_slice), slices.bytes(1));
    if (!status) return status;
  }
  return {};
}

// Before the round with distance d, each rank holds the d slices of its
// aligned group [rank & ~(d-1), +d); it swaps that group with rank ^ d.
Status recursive_doubling(PeerExchange& transport, int rank, int n, const Slices& slices) {
  int round = 0;
  for (int d = 1; d < n; d <<= 1, ++round) {
    const int partner = rank ^ d;
    const int mine = rank & ~(d - 1);
    const int theirs = partner & ~(d - 1);
    Status status = exchange_round(transport, AllGatherAlgorithm::kRecursiveDoubling, round,
                                   partner, slices.at(mine), slices.bytes(d), partner,
                                   slices.at(theirs), slices.bytes(d));
    if (!status) return status;
  }
  return {};
}

// Works on a rotated copy where local index i is rank (rank + i) % n, so every
// round sends a prefix and appends after it, whatever n is.
Status bruck(PeerExchange& transport, int rank, int n, uint8_t* data, std::size_t size) {
  const std::size_t total = static_cast<std::size_t>(n) * size;
  std::unique_ptr<uint8_t[]> scratch;
  if (total > 0) {
    scratch.reset(new (std::nothrow) uint8_t[total]);
    if (!scratch) {
      return make_error(NRT_RESOURCE, "all-gather (bruck): cannot allocate a " +
                                          std::to_string(total) + "-byte scratch buffer");
    }
    std::memcpy(scratch.get(), data + static_cast<std::size_t>(rank) * size, size);
  }
  const Slices local(scratch.get(), size);
  int round = 0;
  for (int d = 1; d < n; d <<= 1, ++round) {
    const int count = d < n - d ? d : n - d;
    Status status = exchange_round(transport, AllGatherAlgorithm::kBruck, round, (rank - d + n) % n,
                                   local.at(0), local.bytes(count), (rank + d) % n, local.at(d),
                                   local.bytes(count));
    if (!status) return status;
  }
  if (total > 0) {
    for (int i = 1; i < n; ++i) {
      const std::size_t slice = static_cast<std::size_t>((rank + i) % n);
      std::memcpy(data + slice * size, local.at(i), size);
    }
  }
  return {};
}

}  // namespace

const char* algorithm_name(AllGatherAlgorithm algorithm) {
  switch (algorithm) {
    case AllGatherAlgorithm::kRing: return "ring";
    case AllGatherAlgorithm::kRecursiveDoubling: return "recursive doubling";
    case AllGatherAlgorithm::kBruck: return "bruck";
  }
  return "unknown";
}

MsgType algorithm_msg_type(AllGatherAlgorithm algorithm) {
  switch (algorithm) {
    case AllGatherAlgorithm::kRing: return MsgType::kRing;
    case AllGatherAlgorithm::kRecursiveDoubling: return MsgType::kRecursiveDoubling;
    case AllGatherAlgorithm::kBruck: return MsgType::kBruck;
  }
  return MsgType::kRing;
}

AllGatherAlgorithm choose_algorithm(int nranks, std::size_t size_per_rank) {
  if (nranks <= kRingMaxRanks || size_per_rank >= kRingSliceBytes) return AllGatherAlgorithm::kRing;
  return is_power_of_two(nranks) ? AllGatherAlgorithm::kRecursiveDoubling
                                 : AllGatherAlgorithm::kBruck;
}

// Recursive doubling is only defined for powers of two, where ceil(log2 n) is
// log2 n; for other n it reports what Bruck would take.
int algorithm_rounds(AllGatherAlgorithm algorithm, int nranks) {
  if (nranks <= 1) return 0;
  return algorithm == AllGatherAlgorithm::kRing ? nranks - 1 : ceil_log2(nranks);
}

Status all_gather(PeerExchange& transport, int rank, int nranks, void* data,
                  std::size_t size_per_rank, AllGatherAlgorithm algorithm) {
  const std::string what = std::string("all-gather (") + algorithm_name(algorithm) + ")";
  if (nranks < 1) {
    return make_error(NRT_INVALID, what + ": nranks " + std::to_string(nranks) + " must be >= 1");
  }
  if (rank < 0 || rank >= nranks) {
    return make_error(NRT_INVALID, what + ": rank " + std::to_string(rank) + " outside [0, " +
                                       std::to_string(nranks) + ")");
  }
  if (size_per_rank > std::numeric_limits<std::size_t>::max() / static_cast<std::size_t>(nranks)) {
    return make_error(NRT_INVALID, what + ": " + std::to_string(nranks) + " x " +
                                       std::to_string(size_per_rank) + " bytes overflows size_t");
  }
  if (data == nullptr && size_per_rank > 0) {
    return make_error(NRT_INVALID, what + ": null buffer for " + std::to_string(size_per_rank) +
                                       " bytes per rank");
  }
  if (algorithm == AllGatherAlgorithm::kRecursiveDoubling && !is_power_of_two(nranks)) {
    return make_error(NRT_INVALID, what + ": needs a power-of-two number of ranks, got " +
                                       std::to_string(nranks));
  }
  if (nranks == 1) return {};

  // size_per_rank 0 still runs the schedule with empty messages: every rank
  // then leaves only after all have entered, as with a non-empty gather.
  auto* bytes = static_cast<uint8_t*>(data);
  switch (algorithm) {
    case AllGatherAlgorithm::kRing:
      return ring(transport, rank, nranks, Slices(bytes, size_per_rank));
    case AllGatherAlgorithm::kRecursiveDoubling:
      return recursive_doubling(transport, rank, nranks, Slices(bytes, size_per_rank));
    case AllGatherAlgorithm::kBruck: return bruck(transport, rank, nranks, bytes, size_per_rank);
  }
  return make_error(NRT_INVALID,
                    what + ": unknown algorithm " + std::to_string(static_cast<int>(algorithm)));
}

}  // namespace nccom::bootstrap
