// All-gather algorithms over any point-to-point transport, with the message
// types of the original's bootstrapAllGather: ring (type 1), recursive
// doubling (7), Bruck (8). Pure schedules:
// the same on every rank, depending only on (nranks, size), so they are
// tested with an in-process transport and run over sockets unchanged.
#pragma once

#include "bootstrap/wire.h"

#include <nccom/util/result.h>

#include <cstddef>
#include <cstdint>

namespace nccom::bootstrap {

// What an algorithm needs from a transport. exchange() sends `send_size`
// bytes to `send_to` and receives exactly `recv_size` bytes from `recv_from`,
// both tagged `type`, progressing both directions together so that a ring of
// simultaneous exchanges cannot deadlock. Either side may be skipped with
// peer -1.
class PeerExchange {
 public:
  virtual ~PeerExchange() = default;
  virtual Status exchange(int send_to, const void* send_data, std::size_t send_size, int recv_from,
                          void* recv_data, std::size_t recv_size, MsgType type) = 0;
};

enum class AllGatherAlgorithm { kRing, kRecursiveDoubling, kBruck };

const char* algorithm_name(AllGatherAlgorithm algorithm);
MsgType algorithm_msg_type(AllGatherAlgorithm algorithm);

// The rule every rank applies (docs/decisions.md): ring for n <= 4 or slices
// of 64 KiB and more (bandwidth-bound); otherwise recursive doubling when n
// is a power of two, Bruck when it is not (latency-bound, log2 n rounds).
AllGatherAlgorithm choose_algorithm(int nranks, std::size_t size_per_rank);

// Number of communication rounds the algorithm takes for n ranks.
int algorithm_rounds(AllGatherAlgorithm algorithm, int nranks);

// `data` holds nranks slices of `size_per_rank` bytes; slice `rank` is this
// rank's input; on success every slice is filled. Recursive doubling requires
// a power-of-two nranks (NRT_INVALID otherwise). Bruck uses a scratch buffer.
Status all_gather(PeerExchange& transport, int rank, int nranks, void* data,
                  std::size_t size_per_rank, AllGatherAlgorithm algorithm);

}  // namespace nccom::bootstrap
