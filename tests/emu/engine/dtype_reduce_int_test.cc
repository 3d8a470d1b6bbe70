// EngineDType: reduce() on the eight integer types — wrap-around, signed and
// unsigned min/max, every edge-value pair against exact 128-bit arithmetic,
// plus hand-checked facts.
#include "dtype.h"
#include "suite.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

namespace nrt_emu::engine {
namespace {

template <class T>
T one(DType t, RedOp op, T a, T b) {
  T d{};
  reduce(t, op, &d, &a, &b, 1);
  return d;
}

TEST(ENGINE_DTYPE_SUITE, IntegerFacts) {
  EXPECT_EQ(one<int8_t>(DType::Int8, RedOp::Sum, 127, 1), -128);
  EXPECT_EQ(one<uint8_t>(DType::Uint8, RedOp::Sum, 255, 1), 0);
  EXPECT_EQ(one<int8_t>(DType::Int8, RedOp::Prod, -128, -1), -128);
  EXPECT_EQ(one<uint16_t>(DType::Uint16, RedOp::Prod, 65535, 65535), 1);  // (2^16-1)^2 mod 2^16
  EXPECT_EQ(one<int16_t>(DType::Int16, RedOp::Prod, 256, 256), 0);
  EXPECT_EQ(one<int32_t>(DType::Int32, RedOp::Prod, INT32_MIN, -1), INT32_MIN);
  EXPECT_EQ(one<uint32_t>(DType::Uint32, RedOp::Sum, 0xFFFFFFFFu, 2), 1u);
  EXPECT_EQ(one<int64_t>(DType::Int64, RedOp::Sum, INT64_MIN, -1), INT64_MAX);
  EXPECT_EQ(one<uint64_t>(DType::Uint64, RedOp::Prod, 1ull << 63, 2), 0u);
  // Signed and unsigned compare differently on the same bits.
  EXPECT_EQ(one<int8_t>(DType::Int8, RedOp::Min, -128, 127), -128);
  EXPECT_EQ(one<uint8_t>(DType::Uint8, RedOp::Min, 0x80, 0x7F), 0x7F);
  EXPECT_EQ(one<int64_t>(DType::Int64, RedOp::Max, INT64_MIN, -1), -1);
  EXPECT_EQ(one<uint64_t>(DType::Uint64, RedOp::Max, UINT64_MAX, 0), UINT64_MAX);
  EXPECT_EQ(one<int16_t>(DType::Int16, RedOp::Avg, 32767, 1), -32768);  // avg combines as sum
}

// Exact result of a op b reduced modulo 2^bits (the two's complement wrap).
template <class T>
T expected(RedOp op, T a, T b) {
  using I = __int128;
  switch (op) {
    case RedOp::Min: return a < b ? a : b;
    case RedOp::Max: return a > b ? a : b;
    case RedOp::Prod: {
      const unsigned __int128 p = (unsigned __int128)(I(a)) * (unsigned __int128)(I(b));
      return T(p & (unsigned __int128)std::numeric_limits<std::make_unsigned_t<T>>::max());
    }
    default: {
      const unsigned __int128 s = (unsigned __int128)(I(a) + I(b));
      return T(s & (unsigned __int128)std::numeric_limits<std::make_unsigned_t<T>>::max());
    }
  }
}

template <class T>
std::vector<T> edges() {
  using L = std::numeric_limits<T>;
  std::vector<T> v = {
      L::min(),        T(L::min() + 1),     T(0),   T(1), T(2), T(3), T(L::max() - 1), L::max(),
      T(L::max() / 2), T(L::max() / 2 + 1), T(0x5A)};
  if (L::is_signed) {
    v.push_back(T(-1));
    v.push_back(T(-2));
    v.push_back(T(L::min() / 2));
  }
  return v;
}

template <class T>
void check_all_pairs(DType t) {
  const std::vector<T> e = edges<T>();
  // All pairs as one buffer (so the vector loop runs, not only the scalar tail).
  std::vector<T> a, b;
  for (T x : e)
    for (T y : e) {
      a.push_back(x);
      b.push_back(y);
    }
  while (a.size() < 600) {  // past two blocks of 256, with a tail
    a.insert(a.end(), a.begin(), a.begin() + std::min<size_t>(a.size(), 600 - a.size()));
    b.insert(b.end(), b.begin(), b.begin() + std::min<size_t>(b.size(), 600 - b.size()));
  }
  for (int o = 0; o < kRedOpCount; ++o) {
    const RedOp op = static_cast<RedOp>(o);
    std::vector<T> d(a.size());
    reduce(t, op, d.data(), a.data(), b.data(), a.size());
    for (size_t i = 0; i < a.size(); ++i)
      ASSERT_EQ(d[i], expected<T>(op, a[i], b[i]))
          << dtype_name(t) << " " << redop_name(op) << " a=" << +a[i] << " b=" << +b[i];
  }
}

TEST(ENGINE_DTYPE_SUITE, IntegerEdgePairs) {
  check_all_pairs<int8_t>(DType::Int8);
  check_all_pairs<uint8_t>(DType::Uint8);
  check_all_pairs<int16_t>(DType::Int16);
  check_all_pairs<uint16_t>(DType::Uint16);
  check_all_pairs<int32_t>(DType::Int32);
  check_all_pairs<uint32_t>(DType::Uint32);
  check_all_pairs<int64_t>(DType::Int64);
  check_all_pairs<uint64_t>(DType::Uint64);
}

// int8/uint8 are small enough to try every pair.
TEST(ENGINE_DTYPE_SUITE, Int8EveryPair) {
  std::vector<int8_t> a, b;
  for (int x = -128; x < 128; ++x)
    for (int y = -128; y < 128; ++y) {
      a.push_back(int8_t(x));
      b.push_back(int8_t(y));
    }
  for (int o = 0; o < kRedOpCount; ++o) {
    const RedOp op = static_cast<RedOp>(o);
    std::vector<int8_t> d(a.size());
    reduce(DType::Int8, op, d.data(), a.data(), b.data(), a.size());
    std::vector<uint8_t> ud(a.size());
    reduce(DType::Uint8, op, ud.data(), a.data(), b.data(), a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(d[i], expected<int8_t>(op, a[i], b[i]))
          << redop_name(op) << " " << +a[i] << " " << +b[i];
      ASSERT_EQ(ud[i], expected<uint8_t>(op, uint8_t(a[i]), uint8_t(b[i]))) << redop_name(op);
    }
  }
}

TEST(ENGINE_DTYPE_SUITE, IntegerAverage) {
  int8_t s8[] = {-7, 7, 100, -128};
  avg_finish(DType::Int8, s8, 4, 2);
  EXPECT_EQ(s8[0], -3);  // truncation toward zero
  EXPECT_EQ(s8[1], 3);
  EXPECT_EQ(s8[2], 50);
  EXPECT_EQ(s8[3], -64);
  int8_t big_ranks[] = {100};
  avg_finish(DType::Int8, big_ranks, 1, 200);  // rank count beyond int8
  EXPECT_EQ(big_ranks[0], 0);
  uint8_t u8[] = {255};
  avg_finish(DType::Uint8, u8, 1, 4);
  EXPECT_EQ(u8[0], 63);
  uint32_t u32[] = {0xFFFFFFFFu};
  avg_finish(DType::Uint32, u32, 1, 3);
  EXPECT_EQ(u32[0], 0x55555555u);
  int64_t i64[] = {INT64_MIN, -5};
  avg_finish(DType::Int64, i64, 2, 3);
  EXPECT_EQ(i64[0], INT64_MIN / 3);
  EXPECT_EQ(i64[1], -1);
  uint64_t u64[] = {UINT64_MAX};
  avg_finish(DType::Uint64, u64, 1, 5);
  EXPECT_EQ(u64[0], 0x3333333333333333ull);
  // Every element of a long buffer (blocks and a tail).
  std::vector<int32_t> v(1001);
  for (size_t i = 0; i < v.size(); ++i) v[i] = int32_t(i) * 7 - 3000;
  avg_finish(DType::Int32, v.data(), v.size(), 7);
  for (size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], (int32_t(i) * 7 - 3000) / 7) << i;
}

}  // namespace
}  // namespace nrt_emu::engine
