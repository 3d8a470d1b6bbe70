// reduce_formats.h — bit-level conversions between float and the narrow
// float formats (fp16, bf16, fp8 e4m3, fp8 e5m2). Internal to nrt_emu_dtype.
//
// Inline and written as integer arithmetic plus selects (no branches, no
// tables) so that the reduce kernels' element loops vectorise: a table lookup
// or a call per element would cost more than the reduction itself.
//
// Rounding is to nearest, ties to even. The subnormal paths let the FPU do
// the rounding: adding a power of two whose float ulp equals the target
// format's subnormal ulp leaves the wanted integer in float's low mantissa
// bits. That needs the default FP environment (round to nearest, no
// flush-to-zero), which is what every thread starts with.
//
// NaNs keep their sign and as much payload as fits, without forcing the quiet
// bit, so every narrow bit pattern survives narrow -> float -> narrow
// unchanged; when truncation would leave an all-zero payload (an infinity's
// encoding) the quiet bit is set instead.
#pragma once

#include <bit>
#include <cstdint>

namespace nrt_emu::engine::fmt {

inline uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }
inline float from_bits(uint32_t u) { return std::bit_cast<float>(u); }

inline constexpr uint32_t kFloatInf = 0x7F800000u;

// x >= y / x > y for values below 2^31, compared as signed: SSE2/AVX2 have signed
// 32-bit compares only, an unsigned one costs extra instructions per vector.
inline bool ge(uint32_t x, uint32_t y) { return int32_t(x) >= int32_t(y); }
inline bool gt(uint32_t x, uint32_t y) { return int32_t(x) > int32_t(y); }

// c ? x : y as a bit mask. A plain ?: whose arm holds a float operation
// becomes a branch under GCC's default -ftrapping-math (the float add could
// raise an exception), and a branch stops vectorisation; masks do not.
inline uint32_t pick(bool c, uint32_t x, uint32_t y) {
  const uint32_t m = 0u - uint32_t(c);
  return (x & m) | (y & ~m);
}

// ---- fp16: IEEE binary16, bias 15, 10 mantissa bits ----------------------

inline float fp16_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t em = h & 0x7FFFu;  // exponent and mantissa
  const uint32_t normal = (em << 13) + ((127u - 15u) << 23);
  const uint32_t special = (em << 13) | kFloatInf;  // inf, NaN (payload kept)
  // Subnormals (and zero) are m * 2^-24, exact in float.
  const uint32_t sub = bits(float(int32_t(em)) * 0x1p-24f);
  const uint32_t r = pick(ge(em, 0x7C00u), special, pick(ge(em, 0x0400u), normal, sub));
  return from_bits(r | sign);
}

inline uint16_t float_to_fp16(float f) {
  const uint32_t u = bits(f);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t a = u & 0x7FFFFFFFu;
  const uint32_t payload = (a >> 13) & 0x3FFu;
  const uint32_t nan = 0x7C00u | (payload != 0 ? payload : 0x200u);
  // Rebias 127 -> 15 and round the 13 dropped bits to nearest even.
  const uint32_t normal = (a - ((127u - 15u) << 23) + 0xFFFu + ((a >> 13) & 1u)) >> 13;
  // 0.5f has ulp 2^-24, binary16's subnormal step.
  const uint32_t sub = bits(from_bits(a) + 0.5f) - bits(0.5f);
  // 65520 = 0x477FF000 is the tie between 65504 (odd mantissa) and 65536: up, to inf.
  const uint32_t r = pick(gt(a, kFloatInf), nan,
                          pick(ge(a, 0x477FF000u), 0x7C00u,
                               pick(ge(a, 0x38800000u), normal, sub)));  // 2^-14: smallest normal
  return uint16_t(r | sign);
}

// ---- bf16: the top half of a float ----------------------------------------

inline float bf16_to_float(uint16_t h) { return from_bits(uint32_t(h) << 16); }

inline uint16_t float_to_bf16(float f) {
  const uint32_t u = bits(f);
  const uint32_t a = u & 0x7FFFFFFFu;
  // Finite values round up into the exponent field naturally (FLT_MAX -> inf).
  const uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
  const uint32_t nan = (u >> 16) | ((u & 0x007F0000u) != 0 ? 0u : 0x40u);
  return uint16_t(gt(a, kFloatInf) ? nan : rounded);
}

// ---- fp8 e4m3 (OCP E4M3FN): bias 7, 3 mantissa bits, no inf, S.1111.111 NaN

inline float fp8_e4m3_to_float(uint8_t v) {
  const uint32_t sign = uint32_t(v & 0x80u) << 24;
  const uint32_t em = v & 0x7Fu;
  const uint32_t normal = (em << 20) + ((127u - 7u) << 23);
  const uint32_t sub = bits(float(int32_t(em)) * 0x1p-9f);  // m * 2^-9
  const uint32_t r = pick(em == 0x7Fu, 0x7FC00000u, pick(ge(em, 0x08u), normal, sub));
  return from_bits(r | sign);
}

inline uint8_t float_to_fp8_e4m3(float f) {
  const uint32_t u = bits(f);
  const uint32_t sign = (u >> 24) & 0x80u;
  const uint32_t a = u & 0x7FFFFFFFu;
  uint32_t normal = (a - ((127u - 7u) << 23) + 0x7FFFFu + ((a >> 20) & 1u)) >> 20;
  // Saturate: anything that rounds past 448 (0x7E), infinities included.
  normal = gt(normal, 0x7Eu) ? 0x7Eu : normal;
  const uint32_t sub = bits(from_bits(a) + 0x1p14f) - bits(0x1p14f);  // ulp 2^-9
  const uint32_t r = pick(gt(a, kFloatInf), 0x7Fu,
                          pick(ge(a, 0x3C800000u), normal, sub));  // 2^-6: smallest normal
  return uint8_t(r | sign);
}

// ---- fp8 e5m2: bias 15, 2 mantissa bits, IEEE inf/NaN (= fp16's top byte)

inline float fp8_e5m2_to_float(uint8_t v) { return fp16_to_float(uint16_t(v << 8)); }

inline uint8_t float_to_fp8_e5m2(float f) {
  const uint32_t u = bits(f);
  const uint32_t sign = (u >> 24) & 0x80u;
  const uint32_t a = u & 0x7FFFFFFFu;
  const uint32_t payload = (a >> 21) & 0x3u;
  const uint32_t nan = 0x7Cu | (payload != 0 ? payload : 0x2u);
  uint32_t normal = (a - ((127u - 15u) << 23) + 0xFFFFFu + ((a >> 21) & 1u)) >> 21;
  normal = gt(normal, 0x7Cu) ? 0x7Cu : normal;                      // overflow (>= 61440) -> inf
  const uint32_t sub = bits(from_bits(a) + 0x1p7f) - bits(0x1p7f);  // ulp 2^-16
  const uint32_t r =
      pick(gt(a, kFloatInf), nan, pick(ge(a, 0x38800000u), normal, sub));  // 2^-14: smallest normal
  return uint8_t(r | sign);
}

// Format descriptors for the kernels' templates.
struct Fp16 {
  using Bits = uint16_t;
  static float to_float(Bits v) { return fp16_to_float(v); }
  static Bits from_float(float f) { return float_to_fp16(f); }
};
struct Bf16 {
  using Bits = uint16_t;
  static float to_float(Bits v) { return bf16_to_float(v); }
  static Bits from_float(float f) { return float_to_bf16(f); }
};
struct Fp8E4M3 {
  using Bits = uint8_t;
  static float to_float(Bits v) { return fp8_e4m3_to_float(v); }
  static Bits from_float(float f) { return float_to_fp8_e4m3(f); }
};
struct Fp8E5M2 {
  using Bits = uint8_t;
  static float to_float(Bits v) { return fp8_e5m2_to_float(v); }
  static Bits from_float(float f) { return float_to_fp8_e5m2(f); }
};

}  // namespace nrt_emu::engine::fmt
