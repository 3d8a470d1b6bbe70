// reduce_kernels.cc — reduce() and avg_finish(): one element loop per
// (element type, operation), instantiated from templates.
//
// Speed: the engine calls reduce() on MiB-size slices, so every loop must
// vectorise at the project's -O2. GCC's -O2 cost model ("very cheap") only
// vectorises loops whose trip count is a multiple of the vector length and
// that need no run-time alias checks, so the work is cut into blocks of
// kBlock elements (a constant trip count) and each block loop carries an
// "iterations are independent" pragma (NRT_EMU_IVDEP): dst may equal a or b,
// but element i only reads index i before writing it, so iterations never
// depend on each other. The last partial block runs the same body with a
// variable count.
//
// fp16 and bf16 are widened to float, combined and rounded back in the same
// loop (reduce_formats.h); fp8 looks the answer up in a per-operation table
// of all 2^16 pairs (PairTable). Decisions: docs/decisions/emu-engine.md;
// figures: docs/internals/emu-engine.md, "Speed".
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "dtype.h"
#include "reduce_formats.h"

namespace nrt_emu::engine {
namespace {

constexpr size_t kBlock = 256;

// "Iterations are independent" for the vectoriser (see the top of the file).
#if defined(__clang__)
#define NRT_EMU_IVDEP _Pragma("clang loop vectorize(assume_safety)")
#else
#define NRT_EMU_IVDEP _Pragma("GCC ivdep")
#endif

// Integer arithmetic in an unsigned type at least as wide as int, so that
// overflow wraps (two's complement) instead of being undefined; the narrow
// types would otherwise be promoted to signed int (65535 * 65535 overflows).
template <class T>
using Wide = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <class T>
struct IntOps {
  static T sum(T a, T b) { return T(Wide<T>(a) + Wide<T>(b)); }
  static T prod(T a, T b) { return T(Wide<T>(a) * Wide<T>(b)); }
  static T min(T a, T b) { return a < b ? a : b; }
  static T max(T a, T b) { return a > b ? a : b; }
};

// IEEE 754-2019 minimum/maximum: a NaN operand gives a NaN (the first NaN
// operand, payload kept), and -0 < +0. Both make the result independent of
// the order in which ranks are combined. On equal operands OR-ing (min) or
// AND-ing (max) the bits picks -0 over +0 (resp. +0 over -0) and is a no-op
// otherwise.
template <class F>
struct FloatOps {
  using U = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
  static U bits(F f) { return std::bit_cast<U>(f); }
  static F from(U u) { return std::bit_cast<F>(u); }
  static F sum(F a, F b) { return a + b; }
  static F prod(F a, F b) { return a * b; }
  static F min(F a, F b) {
    const F r = a == b ? from(bits(a) | bits(b)) : (a < b ? a : b);
    // A NaN is the one value unequal to itself; b NaN: a == b and a < b are false, r = b.
    return a != a ? a : r;  // NOLINT(misc-redundant-expression)
  }
  static F max(F a, F b) {
    const F r = a == b ? from(bits(a) & bits(b)) : (a > b ? a : b);
    return a != a ? a : r;  // NOLINT(misc-redundant-expression): the NaN test, as in min
  }
};

// An operation as a type, so the element loop inlines it.
template <class Ops, RedOp kOp>
struct Apply {
  template <class T>
  static T run(T a, T b) {
    if constexpr (kOp == RedOp::Sum || kOp == RedOp::Avg) return Ops::sum(a, b);
    if constexpr (kOp == RedOp::Prod) return Ops::prod(a, b);
    if constexpr (kOp == RedOp::Min) return Ops::min(a, b);
    if constexpr (kOp == RedOp::Max) return Ops::max(a, b);
  }
};

// Element types held natively (integers, fp32, fp64).
template <class T, class Op>
struct Native {
  using Elem = T;
  [[gnu::always_inline]] static void loop(T* d, const T* a, const T* b, size_t m) {
    NRT_EMU_IVDEP
    for (size_t j = 0; j < m; ++j) d[j] = Op::run(a[j], b[j]);
  }
};

// Narrow floats: combine in float, round back once.
template <class Fmt, class Op>
struct Narrow {
  using Elem = typename Fmt::Bits;
  [[gnu::always_inline]] static void loop(Elem* d, const Elem* a, const Elem* b, size_t m) {
    NRT_EMU_IVDEP
    for (size_t j = 0; j < m; ++j)
      d[j] = Fmt::from_float(Op::run(Fmt::to_float(a[j]), Fmt::to_float(b[j])));
  }
};

template <class Kernel>
void run_blocks(void* dst, const void* a, const void* b, size_t n) {
  using E = typename Kernel::Elem;
  E* d = static_cast<E*>(dst);
  const E* x = static_cast<const E*>(a);
  const E* y = static_cast<const E*>(b);
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) Kernel::loop(d + i, x + i, y + i, kBlock);
  if (i < n) Kernel::loop(d + i, x + i, y + i, n - i);
}

template <template <class, class> class Kind, class Elem, class Ops>
void dispatch_op(RedOp op, void* dst, const void* a, const void* b, size_t n) {
  switch (op) {
    case RedOp::Sum:
    case RedOp::Avg: return run_blocks<Kind<Elem, Apply<Ops, RedOp::Sum>>>(dst, a, b, n);
    case RedOp::Prod: return run_blocks<Kind<Elem, Apply<Ops, RedOp::Prod>>>(dst, a, b, n);
    case RedOp::Min: return run_blocks<Kind<Elem, Apply<Ops, RedOp::Min>>>(dst, a, b, n);
    case RedOp::Max: return run_blocks<Kind<Elem, Apply<Ops, RedOp::Max>>>(dst, a, b, n);
  }
}

template <class T>
void int_op(RedOp op, void* dst, const void* a, const void* b, size_t n) {
  dispatch_op<Native, T, IntOps<T>>(op, dst, a, b, n);
}

// fp8: with 2^16 possible (a, b) pairs, one 64 KiB table per format and
// operation (built on first use, by the Narrow kernel itself, so the results
// are the same bits) replaces the conversions: about 4x faster than
// converting (docs/internals/emu-engine.md, "Speed"). Static storage, no heap.
template <class Fmt, class Op>
struct PairTable {
  using Elem = uint8_t;
  static const uint8_t* table() {
    static const std::array<uint8_t, 65536> built = [] {
      std::array<uint8_t, 65536> r{};
      uint8_t hi[256], lo[256];
      for (int i = 0; i < 256; ++i) lo[i] = uint8_t(i);
      for (int h = 0; h < 256; ++h) {
        std::memset(hi, h, sizeof hi);
        run_blocks<Narrow<Fmt, Op>>(r.data() + h * 256, hi, lo, 256);
      }
      return r;
    }();
    return built.data();
  }
  [[gnu::always_inline]] static void loop(Elem* d, const Elem* a, const Elem* b, size_t m) {
    const uint8_t* t = table();
    // Scalar on purpose (no ivdep: d might alias t as far as GCC knows): the
    // AVX2 byte gathers GCC would emit are slower than plain loads.
#pragma GCC unroll 4
    for (size_t j = 0; j < m; ++j) d[j] = t[unsigned(a[j]) << 8 | b[j]];
  }
};

template <class Fmt>
void narrow_op(RedOp op, void* dst, const void* a, const void* b, size_t n) {
  if constexpr (sizeof(typename Fmt::Bits) == 1)
    dispatch_op<PairTable, Fmt, FloatOps<float>>(op, dst, a, b, n);
  else
    dispatch_op<Narrow, Fmt, FloatOps<float>>(op, dst, a, b, n);
}

// In-place scaling by a per-call factor, blocked like run_blocks.
template <class E, class Fn>
[[gnu::always_inline]] inline void scale_loop(E* q, size_t m, Fn fn) {
  NRT_EMU_IVDEP
  for (size_t j = 0; j < m; ++j) q[j] = fn(q[j]);
}

template <class E, class Fn>
void scale_blocks(void* buf, size_t n, Fn fn) {
  E* p = static_cast<E*>(buf);
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) scale_loop(p + i, kBlock, fn);
  if (i < n) scale_loop(p + i, n - i, fn);
}

// Truncating division (C++ rounds toward zero), in a type where rank_n
// always fits: 32 bits for the narrow integers (the faster divide), 64 bits
// for the 64-bit ones.
template <class T>
void int_avg(void* buf, size_t n, int rank_n) {
  using W =
      std::conditional_t<std::is_signed_v<T>, std::conditional_t<(sizeof(T) < 8), int32_t, int64_t>,
                         std::conditional_t<(sizeof(T) < 8), uint32_t, uint64_t>>;
  const W div = W(rank_n);
  scale_blocks<T>(buf, n, [div](T v) { return T(W(v) / div); });
}

template <class F>
void float_avg(void* buf, size_t n, int rank_n) {
  const F scale = F(1) / F(rank_n);
  scale_blocks<F>(buf, n, [scale](F v) { return v * scale; });
}

template <class Fmt>
void narrow_avg(void* buf, size_t n, int rank_n) {
  using B = typename Fmt::Bits;
  const float scale = 1.0f / float(rank_n);
  scale_blocks<B>(buf, n, [scale](B v) { return Fmt::from_float(Fmt::to_float(v) * scale); });
}

// Each entry point is compiled twice, for AVX2 and for the x86-64 baseline
// (SSE2), and the dynamic loader picks one for the running CPU (an ifunc):
// AVX2's wider vectors, packs and variable shifts make the narrow-float
// conversions about twice as fast. `flatten` inlines every kernel into each
// copy, so the kernels themselves are compiled for both targets. The tests
// build a second copy with NRT_EMU_NO_KERNEL_CLONES to check the baseline.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(NRT_EMU_NO_KERNEL_CLONES)
#define NRT_EMU_X86_CLONES 1
#define NRT_EMU_KERNEL_CLONES [[gnu::target_clones("avx2", "default"), gnu::flatten]]
#else
#define NRT_EMU_X86_CLONES 0
#define NRT_EMU_KERNEL_CLONES [[gnu::flatten]]
#endif

#if NRT_EMU_X86_CLONES
// fp16 with the F16C conversion instructions (every AVX2 CPU has them):
// about 4x faster than the portable bit arithmetic. Blocks of 8 convert to
// float arrays on the stack, the operation runs on the arrays, and the
// results convert back rounding to nearest even; a remainder of fewer than 8
// elements uses the portable conversions, which round the same way. F16C
// quiets signalling NaNs (unlike the portable path); a NaN stays a NaN.
template <class Op>
[[gnu::target("avx2,f16c")]] void fp16_blocks_f16c(void* dst, const void* a, const void* b,
                                                   size_t n) {
  auto* d = static_cast<uint16_t*>(dst);
  const auto* x = static_cast<const uint16_t*>(a);
  const auto* y = static_cast<const uint16_t*>(b);
  alignas(32) float fx[kBlock], fy[kBlock];
  for (size_t i = 0; i < n; i += kBlock) {
    const size_t m = n - i < kBlock ? n - i : kBlock, m8 = m & ~size_t{7};
    for (size_t j = 0; j < m8; j += 8) {
      _mm256_store_ps(
          fx + j, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i + j))));
      _mm256_store_ps(
          fy + j, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(y + i + j))));
    }
    for (size_t j = m8; j < m; ++j) {
      fx[j] = fmt::fp16_to_float(x[i + j]);
      fy[j] = fmt::fp16_to_float(y[i + j]);
    }
    if (m == kBlock) {
      NRT_EMU_IVDEP
      for (size_t j = 0; j < kBlock; ++j) fx[j] = Op::run(fx[j], fy[j]);
    } else {
      for (size_t j = 0; j < m; ++j) fx[j] = Op::run(fx[j], fy[j]);
    }
    for (size_t j = 0; j < m8; j += 8)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i + j),
                       _mm256_cvtps_ph(_mm256_load_ps(fx + j), _MM_FROUND_TO_NEAREST_INT));
    for (size_t j = m8; j < m; ++j) d[i + j] = fmt::float_to_fp16(fx[j]);
  }
}

bool cpu_has_f16c() {
  static const bool has = [] {
    __builtin_cpu_init();  // idempotent; safe before constructors have run
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
  }();
  return has;
}

// Returns false when the CPU lacks F16C; the caller then uses the portable path.
bool fp16_op_f16c(RedOp op, void* dst, const void* a, const void* b, size_t n) {
  if (!cpu_has_f16c()) return false;
  using F = FloatOps<float>;
  switch (op) {
    case RedOp::Sum:
    case RedOp::Avg: fp16_blocks_f16c<Apply<F, RedOp::Sum>>(dst, a, b, n); return true;
    case RedOp::Prod: fp16_blocks_f16c<Apply<F, RedOp::Prod>>(dst, a, b, n); return true;
    case RedOp::Min: fp16_blocks_f16c<Apply<F, RedOp::Min>>(dst, a, b, n); return true;
    case RedOp::Max: fp16_blocks_f16c<Apply<F, RedOp::Max>>(dst, a, b, n); return true;
  }
  return true;  // unknown op: nothing to do, as on the portable path
}
#else
bool fp16_op_f16c(RedOp, void*, const void*, const void*, size_t) { return false; }
#endif

NRT_EMU_KERNEL_CLONES
void reduce_any(DType t, RedOp op, void* dst, const void* a, const void* b, size_t n) {
  switch (t) {
    case DType::Int8: return int_op<int8_t>(op, dst, a, b, n);
    case DType::Uint8: return int_op<uint8_t>(op, dst, a, b, n);
    case DType::Int16: return int_op<int16_t>(op, dst, a, b, n);
    case DType::Uint16: return int_op<uint16_t>(op, dst, a, b, n);
    case DType::Int32: return int_op<int32_t>(op, dst, a, b, n);
    case DType::Uint32: return int_op<uint32_t>(op, dst, a, b, n);
    case DType::Int64: return int_op<int64_t>(op, dst, a, b, n);
    case DType::Uint64: return int_op<uint64_t>(op, dst, a, b, n);
    case DType::Fp32: return dispatch_op<Native, float, FloatOps<float>>(op, dst, a, b, n);
    case DType::Fp64: return dispatch_op<Native, double, FloatOps<double>>(op, dst, a, b, n);
    case DType::Fp16: return narrow_op<fmt::Fp16>(op, dst, a, b, n);
    case DType::Bf16: return narrow_op<fmt::Bf16>(op, dst, a, b, n);
    case DType::Fp8E4M3: return narrow_op<fmt::Fp8E4M3>(op, dst, a, b, n);
    case DType::Fp8E5M2: return narrow_op<fmt::Fp8E5M2>(op, dst, a, b, n);
  }
  // Out-of-range enum values: nothing to do (dtype_size() is 0 for them).
}

NRT_EMU_KERNEL_CLONES
void avg_any(DType t, void* buf, size_t n, int rank_n) {
  switch (t) {
    case DType::Int8: return int_avg<int8_t>(buf, n, rank_n);
    case DType::Uint8: return int_avg<uint8_t>(buf, n, rank_n);
    case DType::Int16: return int_avg<int16_t>(buf, n, rank_n);
    case DType::Uint16: return int_avg<uint16_t>(buf, n, rank_n);
    case DType::Int32: return int_avg<int32_t>(buf, n, rank_n);
    case DType::Uint32: return int_avg<uint32_t>(buf, n, rank_n);
    case DType::Int64: return int_avg<int64_t>(buf, n, rank_n);
    case DType::Uint64: return int_avg<uint64_t>(buf, n, rank_n);
    case DType::Fp32: return float_avg<float>(buf, n, rank_n);
    case DType::Fp64: return float_avg<double>(buf, n, rank_n);
    case DType::Fp16: return narrow_avg<fmt::Fp16>(buf, n, rank_n);
    case DType::Bf16: return narrow_avg<fmt::Bf16>(buf, n, rank_n);
    case DType::Fp8E4M3: return narrow_avg<fmt::Fp8E4M3>(buf, n, rank_n);
    case DType::Fp8E5M2: return narrow_avg<fmt::Fp8E5M2>(buf, n, rank_n);
  }
}

}  // namespace

void reduce(DType t, RedOp op, void* dst, const void* a, const void* b, size_t n) {
  if (n == 0) return;
  if (t == DType::Fp16 && fp16_op_f16c(op, dst, a, b, n)) return;
  reduce_any(t, op, dst, a, b, n);
}

void avg_finish(DType t, void* buf, size_t n, int rank_n) {
  if (n != 0 && rank_n >= 1) avg_any(t, buf, n, rank_n);  // rank_n < 1: no average, sum kept
}

}  // namespace nrt_emu::engine
