// The peers neuronExpandConnectivity connects (docs/decisions/transport.md,
// "neuronExpandConnectivity"). Pure functions of (connectivity, rank, rank count), so every
// rank computes the same symmetric plan.
#pragma once

#include <nccom/nrt_abi.h>
#include <nccom/util/result.h>

#include <vector>

namespace nccom::transport {

// MESH: every other rank. RDH: recursive doubling/halving partners over the
// largest power of two p2 <= n (rank XOR 2^k, k < log2 p2) plus the fold
// partner of the n - p2 extra ranks (r + p2 for r < n - p2; r - p2 for
// r >= p2, which then has only that partner). DEFAULT: none (rings only).
// Sorted ascending, never `rank` itself. An out-of-range argument is an error.
Result<std::vector<int>> connectivity_peers(uint32_t conn, int rank, int n);

const char* connectivity_name(uint32_t conn);  // "MESH", "RDH", "DEFAULT", "?"

}  // namespace nccom::transport
