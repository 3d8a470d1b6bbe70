// EngineDType: the narrow float conversions — hand-checked encodings, ties,
// overflow, every bit pattern through float and back, and float -> narrow
// against the independent reference encoder (narrow_ref.h).
#include "dtype.h"
#include "narrow_ref.h"
#include "suite.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace nrt_emu::engine {
namespace {

uint32_t fbits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Hand-checked: 1.0 and -2.0, smallest subnormal, smallest normal, max.
TEST(ENGINE_DTYPE_SUITE, KnownEncodingsFp16) {
  EXPECT_EQ(float_to_fp16(1.0f), 0x3C00);
  EXPECT_EQ(float_to_fp16(-2.0f), 0xC000);
  EXPECT_EQ(float_to_fp16(0x1p-24f), 0x0001);
  EXPECT_EQ(float_to_fp16(0x1p-14f), 0x0400);
  EXPECT_EQ(float_to_fp16(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_fp16(-0.0f), 0x8000);
  EXPECT_EQ(float_to_fp16(INFINITY), 0x7C00);
  EXPECT_EQ(float_to_fp16(-INFINITY), 0xFC00);
  EXPECT_EQ(fp16_to_float(0x3555), 0x1.554p-2f);  // 0.333251953125
  EXPECT_EQ(fp16_to_float(0x0001), 0x1p-24f);
  EXPECT_EQ(fp16_to_float(0x03FF), 0x3FFp-24f);
  EXPECT_TRUE(std::isnan(fp16_to_float(0x7E00)));
  EXPECT_TRUE(std::isinf(fp16_to_float(0xFC00)));
}

TEST(ENGINE_DTYPE_SUITE, KnownEncodingsBf16) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16(-2.0f), 0xC000);
  EXPECT_EQ(float_to_bf16(0x1p-133f), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_bf16(0x1p-126f), 0x0080);
  EXPECT_EQ(float_to_bf16(0x1.FEp127f), 0x7F7F);             // max
  EXPECT_EQ(float_to_bf16(3.4028234663852886e38f), 0x7F80);  // FLT_MAX rounds up to inf
  EXPECT_EQ(bf16_to_float(0x4049), 3.140625f);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(NAN))));
}

TEST(ENGINE_DTYPE_SUITE, KnownEncodingsFp8) {
  EXPECT_EQ(float_to_fp8_e4m3(1.0f), 0x38);
  EXPECT_EQ(float_to_fp8_e4m3(-2.0f), 0xC0);
  EXPECT_EQ(float_to_fp8_e4m3(0x1p-9f), 0x01);
  EXPECT_EQ(float_to_fp8_e4m3(0x1p-6f), 0x08);
  EXPECT_EQ(float_to_fp8_e4m3(448.0f), 0x7E);
  EXPECT_EQ(fp8_e4m3_to_float(0x7E), 448.0f);
  EXPECT_EQ(fp8_e4m3_to_float(0x77), 240.0f);
  EXPECT_EQ(fp8_e4m3_to_float(0x07), 7 * 0x1p-9f);
  EXPECT_TRUE(std::isnan(fp8_e4m3_to_float(0x7F)));
  EXPECT_TRUE(std::isnan(fp8_e4m3_to_float(0xFF)));
  EXPECT_EQ(fp8_e4m3_to_float(0x78), 256.0f);  // S.1111.000 is a number, not inf

  EXPECT_EQ(float_to_fp8_e5m2(1.0f), 0x3C);
  EXPECT_EQ(float_to_fp8_e5m2(-2.0f), 0xC0);
  EXPECT_EQ(float_to_fp8_e5m2(0x1p-16f), 0x01);
  EXPECT_EQ(float_to_fp8_e5m2(0x1p-14f), 0x04);
  EXPECT_EQ(float_to_fp8_e5m2(57344.0f), 0x7B);
  EXPECT_EQ(float_to_fp8_e5m2(INFINITY), 0x7C);
  EXPECT_TRUE(std::isinf(fp8_e5m2_to_float(0xFC)));
  EXPECT_TRUE(std::isnan(fp8_e5m2_to_float(0x7D)));
}

// Halfway cases go to the even neighbour; a hair above goes up.
TEST(ENGINE_DTYPE_SUITE, TiesToEven) {
  EXPECT_EQ(float_to_fp16(1.0f + 0x1p-11f), 0x3C00);
  EXPECT_EQ(float_to_fp16(1.0f + 3 * 0x1p-11f), 0x3C02);
  EXPECT_EQ(float_to_fp16(1.0f + 0x1p-11f + 0x1p-20f), 0x3C01);
  EXPECT_EQ(float_to_fp16(0x1p-25f), 0x0000);      // subnormal tie -> 0
  EXPECT_EQ(float_to_fp16(3 * 0x1p-25f), 0x0002);  // 1.5 ulp -> 2
  EXPECT_EQ(float_to_fp16(0x1p-25f + 0x1p-40f), 0x0001);
  EXPECT_EQ(float_to_bf16(1.0f + 0x1p-8f), 0x3F80);
  EXPECT_EQ(float_to_bf16(1.0f + 3 * 0x1p-8f), 0x3F82);
  EXPECT_EQ(float_to_fp8_e4m3(1.0f + 0x1p-4f), 0x38);
  EXPECT_EQ(float_to_fp8_e4m3(1.0f + 3 * 0x1p-4f), 0x3A);
  EXPECT_EQ(float_to_fp8_e4m3(0x1p-10f), 0x00);
  EXPECT_EQ(float_to_fp8_e4m3(3 * 0x1p-10f), 0x02);
  EXPECT_EQ(float_to_fp8_e5m2(1.0f + 0x1p-3f), 0x3C);
  EXPECT_EQ(float_to_fp8_e5m2(1.0f + 3 * 0x1p-3f), 0x3E);
  EXPECT_EQ(float_to_fp8_e5m2(0x1p-17f), 0x00);
  EXPECT_EQ(float_to_fp8_e5m2(3 * 0x1p-17f), 0x02);
}

TEST(ENGINE_DTYPE_SUITE, Overflow) {
  EXPECT_EQ(float_to_fp16(65519.0f), 0x7BFF);  // below the 65520 tie
  EXPECT_EQ(float_to_fp16(65520.0f), 0x7C00);  // tie, 65504 is odd: up to inf
  EXPECT_EQ(float_to_fp16(-1e10f), 0xFC00);
  // e4m3 saturates: past 448 (the 464 tie included) and infinities give ±448.
  EXPECT_EQ(float_to_fp8_e4m3(464.0f), 0x7E);
  EXPECT_EQ(float_to_fp8_e4m3(500.0f), 0x7E);
  EXPECT_EQ(float_to_fp8_e4m3(1e30f), 0x7E);
  EXPECT_EQ(float_to_fp8_e4m3(INFINITY), 0x7E);
  EXPECT_EQ(float_to_fp8_e4m3(-INFINITY), 0xFE);
  EXPECT_EQ(float_to_fp8_e4m3(NAN), 0x7F);
  EXPECT_EQ(float_to_fp8_e5m2(61439.0f), 0x7B);
  EXPECT_EQ(float_to_fp8_e5m2(61440.0f), 0x7C);  // tie, 57344 is odd: up to inf
  EXPECT_EQ(float_to_fp8_e5m2(-1e10f), 0xFC);
}

// Every bit pattern goes to float and back unchanged (NaN payloads too), and
// decodes to the value the reference computes from the fields.
void check_round_trip(DType t, uint32_t count, float (*to)(uint32_t), uint32_t (*from)(float)) {
  const auto& f = testref::format_of(t);
  for (uint32_t v = 0; v < count; ++v) {
    const float x = to(v);
    ASSERT_EQ(from(x), v) << dtype_name(t) << " pattern 0x" << std::hex << v;
    const double want = testref::decode(f, v);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(x)) << dtype_name(t) << " 0x" << std::hex << v;
    } else {
      ASSERT_EQ(double(x), want) << dtype_name(t) << " 0x" << std::hex << v;
      ASSERT_EQ(std::signbit(x), std::signbit(want)) << dtype_name(t) << " 0x" << std::hex << v;
    }
  }
}

TEST(ENGINE_DTYPE_SUITE, EveryPatternRoundTrips) {
  check_round_trip(
      DType::Fp16, 1u << 16, [](uint32_t v) { return fp16_to_float(uint16_t(v)); },
      [](float x) -> uint32_t { return float_to_fp16(x); });
  check_round_trip(
      DType::Bf16, 1u << 16, [](uint32_t v) { return bf16_to_float(uint16_t(v)); },
      [](float x) -> uint32_t { return float_to_bf16(x); });
  check_round_trip(
      DType::Fp8E4M3, 256, [](uint32_t v) { return fp8_e4m3_to_float(uint8_t(v)); },
      [](float x) -> uint32_t { return float_to_fp8_e4m3(x); });
  check_round_trip(
      DType::Fp8E5M2, 256, [](uint32_t v) { return fp8_e5m2_to_float(uint8_t(v)); },
      [](float x) -> uint32_t { return float_to_fp8_e5m2(x); });
}

uint32_t to_narrow(DType t, float x) {
  switch (t) {
    case DType::Fp16: return float_to_fp16(x);
    case DType::Bf16: return float_to_bf16(x);
    case DType::Fp8E4M3: return float_to_fp8_e4m3(x);
    default: return float_to_fp8_e5m2(x);
  }
}

// Float -> narrow against the reference: every midpoint between neighbours,
// one float ulp either side of it, each representable value, and random floats.
void check_rounding(DType t) {
  const auto& f = testref::format_of(t);
  const uint32_t half = 1u << (f.exp_bits + f.man_bits);
  std::vector<float> probes;
  for (uint32_t v = 0; v + 1 < half; ++v) {
    const double lo = testref::decode(f, v), hi = testref::decode(f, v + 1);
    if (!std::isfinite(lo)) continue;
    const double top = std::isfinite(hi) ? hi : 2 * lo - testref::decode(f, v - 1);  // past max
    const float mid = float((lo + top) / 2);  // exact: mid has one more bit
    for (float p : {float(lo), mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)})
      for (float s : {p, -p}) probes.push_back(s);
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) {
    float x;
    const uint32_t u = rng();
    std::memcpy(&x, &u, 4);
    probes.push_back(x);
  }
  for (float x : {0.0f, -0.0f, INFINITY, -INFINITY, 1e-45f, 3.4e38f, -3.4e38f}) probes.push_back(x);
  for (float x : probes) {
    const uint32_t got = to_narrow(t, x), want = testref::encode(f, double(x));
    if (std::isnan(x)) {
      ASSERT_TRUE(testref::is_nan_bits(f, got))
          << dtype_name(t) << " x bits 0x" << std::hex << fbits(x);
    } else {
      ASSERT_EQ(got, want) << dtype_name(t) << " x=" << x << " bits 0x" << std::hex << fbits(x);
    }
  }
}

TEST(ENGINE_DTYPE_SUITE, RoundingMatchesReferenceFp16) { check_rounding(DType::Fp16); }
TEST(ENGINE_DTYPE_SUITE, RoundingMatchesReferenceBf16) { check_rounding(DType::Bf16); }
TEST(ENGINE_DTYPE_SUITE, RoundingMatchesReferenceFp8E4M3) { check_rounding(DType::Fp8E4M3); }
TEST(ENGINE_DTYPE_SUITE, RoundingMatchesReferenceFp8E5M2) { check_rounding(DType::Fp8E5M2); }

// NaN payloads that survive truncation are kept; one that would vanish sets
// the quiet bit instead of turning into an infinity.
TEST(ENGINE_DTYPE_SUITE, NanPayloads) {
  EXPECT_EQ(float_to_fp16(std::bit_cast<float>(0x7F802000u)), 0x7C01);
  EXPECT_EQ(float_to_fp16(std::bit_cast<float>(0xFF800001u)), 0xFE00);
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x7F800001u)), 0x7FC0);
  EXPECT_EQ(float_to_fp8_e5m2(std::bit_cast<float>(0x7F800001u)), 0x7E);
  EXPECT_EQ(float_to_fp8_e4m3(std::bit_cast<float>(0xFFC00000u)), 0xFF);
}

}  // namespace
}  // namespace nrt_emu::engine
