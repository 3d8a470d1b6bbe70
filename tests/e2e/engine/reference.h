// Inputs and expected outputs of the engine tests: every rank can compute
// every other rank's input, so each checks its own output exactly.
//
// Inputs are chosen so that every reduction is exact in its type whatever
// the order the ring adds them in (integers wrap, which is order-free;
// floats get small non-negative integers whose partial sums stay exactly
// representable, products of 1s and 2s, any value for min/max), so the
// expected result is bit-exact for every type, fp8 included.
#pragma once

#include "dtype.h"

#include <cstdint>
#include <string>
#include <vector>

namespace engine_test {

using nrt_emu::engine::DType;
using nrt_emu::engine::RedOp;

inline uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

// Largest summand for an exact sum of up to 8 ranks.
inline double sum_limit(DType t) {
  switch (t) {
    case DType::Fp8E4M3:
    case DType::Fp8E5M2: return 1;
    case DType::Bf16: return 16;
    case DType::Fp16: return 128;
    default: return 1000;
  }
}

// Element i of `rank`'s input (salt separates collectives and sizes).
inline double input_value(DType t, RedOp op, int rank, uint64_t i, uint64_t salt) {
  const uint64_t h = mix((static_cast<uint64_t>(rank) << 40) ^ (i * 0x9e3779b97f4a7c15ull) ^ salt);
  if (!nrt_emu::engine::is_float(t)) {
    // Any bit pattern: store() wraps to the type's width.
    return static_cast<double>(static_cast<int64_t>(h % 2000001) - 1000000);
  }
  switch (op) {
    case RedOp::Prod: return (h & 3) == 0 ? 2 : 1;
    case RedOp::Min:
    case RedOp::Max: return static_cast<double>(static_cast<int64_t>(h % 61) - 30) / 4;
    default: return static_cast<double>(h % (static_cast<uint64_t>(sum_limit(t)) + 1));
  }
}

inline void fill(DType t, RedOp op, int rank, uint64_t salt, uint64_t first, uint64_t n,
                 void* buf) {
  for (uint64_t i = 0; i < n; ++i)
    nrt_emu::engine::store(t, buf, i, input_value(t, op, rank, first + i, salt));
}

// The reduction of every rank's input over [first, first + n), in rank order.
inline std::vector<uint8_t> reduced(DType t, RedOp op, int ranks, uint64_t salt, uint64_t first,
                                    uint64_t n) {
  const size_t es = nrt_emu::engine::dtype_size(t);
  std::vector<uint8_t> acc(n * es), in(n * es);
  fill(t, op, 0, salt, first, n, acc.data());
  for (int r = 1; r < ranks; ++r) {
    fill(t, op, r, salt, first, n, in.data());
    nrt_emu::engine::reduce(t, op, acc.data(), acc.data(), in.data(), n);
  }
  if (op == RedOp::Avg) nrt_emu::engine::avg_finish(t, acc.data(), n, ranks);
  return acc;
}

}  // namespace engine_test
