// EngineDType: reduce() on the six float types. fp32/fp64 against IEEE
// arithmetic with the documented min/max (NaN propagates, -0 < +0); the
// narrow formats against the exact result in double rounded once by the
// reference encoder — every pair for fp8, edge values and random pairs for
// fp16/bf16. Then aliasing, sizes around the block length, n = 0, averages.
#include "dtype.h"
#include "narrow_ref.h"
#include "suite.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace nrt_emu::engine {
namespace {

// The documented min/max: IEEE 754-2019 minimum/maximum.
template <class F>
F ref_minmax(bool is_min, F a, F b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (a == 0 && b == 0) return (std::signbit(a) == is_min) ? a : b;  // min prefers -0
  return is_min ? (a < b ? a : b) : (a > b ? a : b);
}

template <class F>
bool same(F got, F want) {
  if (std::isnan(want)) return std::isnan(got);
  return got == want && std::signbit(got) == std::signbit(want);
}

template <class F>
void check_wide(DType t) {
  using L = std::numeric_limits<F>;
  const F vals[] = {F(0),
                    -F(0),
                    F(1),
                    F(-1),
                    F(1.5),
                    F(-2.25),
                    L::max(),
                    -L::max(),
                    L::min(),
                    L::denorm_min(),
                    -L::denorm_min(),
                    L::infinity(),
                    -L::infinity(),
                    L::quiet_NaN(),
                    F(1) + L::epsilon(),
                    F(3)};
  std::vector<F> a, b;
  for (F x : vals)
    for (F y : vals) {
      a.push_back(x);
      b.push_back(y);
    }
  while (a.size() < 700) {  // two full blocks and a tail
    const size_t k = std::min<size_t>(a.size(), 700 - a.size());
    a.insert(a.end(), a.begin(), a.begin() + k);
    b.insert(b.end(), b.begin(), b.begin() + k);
  }
  for (int o = 0; o < kRedOpCount; ++o) {
    const RedOp op = static_cast<RedOp>(o);
    std::vector<F> d(a.size());
    reduce(t, op, d.data(), a.data(), b.data(), a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      F want;
      switch (op) {
        case RedOp::Prod: want = a[i] * b[i]; break;
        case RedOp::Min: want = ref_minmax(true, a[i], b[i]); break;
        case RedOp::Max: want = ref_minmax(false, a[i], b[i]); break;
        default: want = a[i] + b[i]; break;
      }
      ASSERT_TRUE(same(d[i], want)) << dtype_name(t) << " " << redop_name(op) << " " << a[i] << ", "
                                    << b[i] << " -> " << d[i] << " want " << want;
    }
  }
}

TEST(ENGINE_DTYPE_SUITE, Fp32EdgePairs) { check_wide<float>(DType::Fp32); }
TEST(ENGINE_DTYPE_SUITE, Fp64EdgePairs) { check_wide<double>(DType::Fp64); }

TEST(ENGINE_DTYPE_SUITE, MinMaxNanAndSignedZeroBothOrders) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  float a[] = {nan, 1.0f, 0.0f, -0.0f}, b[] = {1.0f, nan, -0.0f, 0.0f}, d[4];
  reduce(DType::Fp32, RedOp::Min, d, a, b, 4);
  EXPECT_TRUE(std::isnan(d[0]) && std::isnan(d[1]));
  EXPECT_TRUE(d[2] == 0 && std::signbit(d[2]) && std::signbit(d[3]));
  reduce(DType::Fp32, RedOp::Max, d, a, b, 4);
  EXPECT_TRUE(std::isnan(d[0]) && std::isnan(d[1]));
  EXPECT_TRUE(!std::signbit(d[2]) && !std::signbit(d[3]));
}

// Exact a op b in double (exact for every narrow pair: few significant bits),
// rounded once by the reference. Min/max keep an operand's exact bits.
uint32_t narrow_expected(DType t, RedOp op, uint32_t a, uint32_t b) {
  const auto& f = testref::format_of(t);
  const double x = testref::decode(f, a), y = testref::decode(f, b);
  switch (op) {
    case RedOp::Min:
    case RedOp::Max: {
      const double r = ref_minmax(op == RedOp::Min, x, y);
      if (std::isnan(x)) return a;
      if (std::isnan(y)) return b;
      return std::signbit(r) == std::signbit(x) && r == x ? a : b;
    }
    case RedOp::Prod: return testref::encode(f, x * y);
    default: return testref::encode(f, x + y);
  }
}

template <class B>
void check_narrow_pairs(DType t, const std::vector<B>& a, const std::vector<B>& b) {
  const auto& f = testref::format_of(t);
  for (int o = 0; o < kRedOpCount; ++o) {
    const RedOp op = static_cast<RedOp>(o);
    std::vector<B> d(a.size());
    reduce(t, op, d.data(), a.data(), b.data(), a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      const uint32_t want = narrow_expected(t, op, a[i], b[i]);
      if (testref::is_nan_bits(f, want)) {
        ASSERT_TRUE(testref::is_nan_bits(f, d[i])) << dtype_name(t) << " " << redop_name(op);
      } else {
        ASSERT_EQ(d[i], want) << dtype_name(t) << " " << redop_name(op) << std::hex << " a=0x"
                              << +a[i] << " b=0x" << +b[i];
      }
    }
  }
}

TEST(ENGINE_DTYPE_SUITE, Fp8EveryPair) {
  for (DType t : {DType::Fp8E4M3, DType::Fp8E5M2}) {
    std::vector<uint8_t> a, b;
    for (int x = 0; x < 256; ++x)
      for (int y = 0; y < 256; ++y) {
        a.push_back(uint8_t(x));
        b.push_back(uint8_t(y));
      }
    check_narrow_pairs(t, a, b);
  }
}

TEST(ENGINE_DTYPE_SUITE, Fp8Saturation) {
  uint8_t a[] = {0x7E, 0xFE, 0x7E}, b[] = {0x7E, 0xFE, 0x50}, d[3];
  reduce(DType::Fp8E4M3, RedOp::Sum, d, a, b, 3);  // 448 + 448, -448 - 448, 448 + 32
  EXPECT_EQ(d[0], 0x7E);
  EXPECT_EQ(d[1], 0xFE);
  EXPECT_EQ(d[2], 0x7E);
  uint8_t c[] = {0x7B}, e[] = {0x7B};
  reduce(DType::Fp8E5M2, RedOp::Sum, d, c, e, 1);  // 57344 + 57344 -> inf
  EXPECT_EQ(d[0], 0x7C);
}

std::vector<uint16_t> sixteen_bit_edges(DType t) {
  if (t == DType::Fp16)
    return {0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x3C00, 0xBC00, 0x3C01, 0x3555,
            0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0x4000, 0x1400, 0x0200, 0x5BFF};
  return {0x0000, 0x8000, 0x0001, 0x8001, 0x007F, 0x0080, 0x3F80, 0xBF80, 0x3F81, 0x4049,
          0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x7FC0, 0x7F81, 0x4000, 0x3400, 0x0040, 0x5F7F};
}

TEST(ENGINE_DTYPE_SUITE, SixteenBitFloatPairs) {
  for (DType t : {DType::Fp16, DType::Bf16}) {
    const auto e = sixteen_bit_edges(t);
    std::vector<uint16_t> a, b;
    for (uint16_t x : e)
      for (uint16_t y : e) {
        a.push_back(x);
        b.push_back(y);
      }
    std::mt19937 rng(11);
    for (int i = 0; i < 100000; ++i) {
      a.push_back(uint16_t(rng()));
      b.push_back(uint16_t(rng()));
    }
    check_narrow_pairs(t, a, b);
  }
}

// Buffers of every type with mixed values, as raw bytes.
std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& x : v) x = uint8_t(rng());
  return v;
}

// Equal bits, or both NaN: which NaN a sum or product of two NaNs gives is
// unspecified (the vector and scalar code may order the operands differently).
bool same_element(DType t, const uint8_t* p, const uint8_t* q) {
  if (is_float(t) && std::isnan(load(t, p, 0)) && std::isnan(load(t, q, 0))) return true;
  return std::memcmp(p, q, dtype_size(t)) == 0;
}

bool same_buffer(DType t, const uint8_t* p, const uint8_t* q, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (!same_element(t, p + i * dtype_size(t), q + i * dtype_size(t))) return false;
  return true;
}

// In place (dst == a, dst == b) gives what out of place gives; n = 0 writes
// nothing; sizes around the block length write exactly n elements, each equal
// to a one-element reduce of the same inputs.
TEST(ENGINE_DTYPE_SUITE, AliasingSizesAndBounds) {
  for (int ti = 0; ti < kDTypeCount; ++ti) {
    const DType t = static_cast<DType>(ti);
    const size_t es = dtype_size(t);
    for (int o = 0; o < kRedOpCount; ++o) {
      const RedOp op = static_cast<RedOp>(o);
      for (size_t n : {size_t(0), size_t(1), size_t(255), size_t(256), size_t(257), size_t(1001)}) {
        const auto a = random_bytes(n * es, 1), b = random_bytes(n * es, 2);
        std::vector<uint8_t> out(n * es + 16, 0xCD);
        reduce(t, op, out.data(), a.data(), b.data(), n);
        for (size_t k = n * es; k < out.size(); ++k)
          ASSERT_EQ(out[k], 0xCD) << dtype_name(t) << " wrote past n=" << n;
        for (size_t i = 0; i < n; ++i) {
          uint8_t single[8];
          reduce(t, op, single, a.data() + i * es, b.data() + i * es, 1);
          ASSERT_TRUE(same_element(t, single, out.data() + i * es))
              << dtype_name(t) << " " << redop_name(op) << " n=" << n << " i=" << i;
        }
        auto in_a = a;
        reduce(t, op, in_a.data(), in_a.data(), b.data(), n);
        ASSERT_TRUE(same_buffer(t, in_a.data(), out.data(), n)) << dtype_name(t) << " dst==a";
        auto in_b = b;
        reduce(t, op, in_b.data(), a.data(), in_b.data(), n);
        ASSERT_TRUE(same_buffer(t, in_b.data(), out.data(), n)) << dtype_name(t) << " dst==b";
      }
    }
  }
  reduce(DType::Fp32, RedOp::Sum, nullptr, nullptr, nullptr, 0);  // n = 0 touches nothing
}

TEST(ENGINE_DTYPE_SUITE, FloatAverage) {
  float f32[] = {3.0f, -6.0f, 1.0f};
  avg_finish(DType::Fp32, f32, 3, 3);
  EXPECT_EQ(f32[0], 1.0f);  // 3 * 0.33333334f = 1 + 2^-25, rounds to 1
  EXPECT_EQ(f32[1], -2.0f);
  EXPECT_EQ(f32[2], 0.33333334f);
  double f64[] = {10.0};
  avg_finish(DType::Fp64, f64, 1, 4);
  EXPECT_EQ(f64[0], 2.5);
  uint16_t h[] = {0x4600, 0x7BFF};  // 6.0, 65504
  avg_finish(DType::Fp16, h, 2, 4);
  EXPECT_EQ(h[0], 0x3E00);   // 1.5
  EXPECT_EQ(h[1], 0x73FF);   // 16376
  uint16_t bf[] = {0x4040};  // 3.0
  avg_finish(DType::Bf16, bf, 1, 2);
  EXPECT_EQ(bf[0], 0x3FC0);                    // 1.5
  uint8_t e4[] = {0x7E, 0x01}, e5[] = {0x7C};  // 448, 2^-9; inf
  avg_finish(DType::Fp8E4M3, e4, 2, 2);
  EXPECT_EQ(e4[0], 0x76);  // 224
  EXPECT_EQ(e4[1], 0x00);  // 2^-10: the tie rounds to even zero
  avg_finish(DType::Fp8E5M2, e5, 1, 8);
  EXPECT_EQ(e5[0], 0x7C);
  float keep[] = {5.0f};
  avg_finish(DType::Fp32, keep, 1, 0);  // no ranks: left as is
  EXPECT_EQ(keep[0], 5.0f);
  std::vector<float> v(777, 8.0f);
  avg_finish(DType::Fp32, v.data(), v.size(), 8);
  for (float x : v) ASSERT_EQ(x, 1.0f);
}

}  // namespace
}  // namespace nrt_emu::engine
