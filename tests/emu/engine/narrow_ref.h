// narrow_ref.h — a slow, independent model of the narrow float formats for
// the tests: decoding from the fields with ldexp, encoding by scaling to the
// format's grid and rounding the fraction by hand. Shares no code or trick
// with the engine's bit-level conversions (emu/engine/reduce_formats.h).
#pragma once

#include "dtype.h"

#include <cmath>
#include <cstdint>
#include <map>

namespace nrt_emu::engine::testref {

struct Format {
  int exp_bits;
  int man_bits;
  int bias;
  bool ieee_special;  // all-ones exponent = inf/NaN; false: OCP E4M3FN
  double max;         // largest finite value
  uint32_t nan;       // the NaN the reference produces (positive)
  uint32_t inf;       // infinity's encoding (unused without ieee_special)
};

inline const Format kFp16{5, 10, 15, true, 65504.0, 0x7E00, 0x7C00};
inline const Format kBf16{8, 7, 127, true, 0x1.FEp127, 0x7FC0, 0x7F80};
inline const Format kE4M3{4, 3, 7, false, 448.0, 0x7F, 0};
inline const Format kE5M2{5, 2, 15, true, 57344.0, 0x7E, 0x7C};

inline const Format& format_of(DType t) {
  switch (t) {
    case DType::Fp16: return kFp16;
    case DType::Bf16: return kBf16;
    case DType::Fp8E4M3: return kE4M3;
    default: return kE5M2;
  }
}

inline int total_bits(const Format& f) { return 1 + f.exp_bits + f.man_bits; }

inline double decode(const Format& f, uint32_t v) {
  const uint32_t sign = (v >> (f.exp_bits + f.man_bits)) & 1u;
  const uint32_t e = (v >> f.man_bits) & ((1u << f.exp_bits) - 1u);
  const uint32_t m = v & ((1u << f.man_bits) - 1u);
  const uint32_t e_max = (1u << f.exp_bits) - 1u;
  double mag;
  if (f.ieee_special && e == e_max) {
    mag = m == 0 ? INFINITY : NAN;
  } else if (!f.ieee_special && e == e_max && m == (1u << f.man_bits) - 1u) {
    mag = NAN;
  } else if (e == 0) {
    mag = std::ldexp(double(m), 1 - f.bias - f.man_bits);
  } else {
    mag = std::ldexp(double((1u << f.man_bits) + m), int(e) - f.bias - f.man_bits);
  }
  return sign ? -mag : mag;
}

// Positive finite value -> encoding, built from decode() over every pattern.
inline uint32_t encode_exact(const Format& f, double value) {
  static std::map<const Format*, std::map<double, uint32_t>> tables;
  auto& table = tables[&f];
  if (table.empty()) {
    const uint32_t half = 1u << (f.exp_bits + f.man_bits);
    for (uint32_t v = 0; v < half; ++v) {
      const double d = decode(f, v);
      if (std::isfinite(d)) table.emplace(d, v);
    }
  }
  return table.at(value);
}

// Round x to nearest, ties to even; overflow to inf (IEEE-like formats) or
// saturation to max (E4M3FN, infinities included). NaN -> f.nan.
inline uint32_t encode(const Format& f, double x) {
  const uint32_t sign_bit = std::signbit(x) ? 1u << (f.exp_bits + f.man_bits) : 0u;
  if (std::isnan(x)) return f.nan | sign_bit;
  double a = std::fabs(x);
  if (!f.ieee_special && a > f.max) a = f.max;
  if (std::isinf(a)) return f.inf | sign_bit;
  // The grid step at a: fixed below the smallest normal, else 2^(exponent - man_bits).
  const int min_normal_exp = 1 - f.bias;
  int exp2 = 0;
  std::frexp(a, &exp2);  // a = frac * 2^exp2, frac in [0.5, 1)
  const int step_exp = (exp2 - 1 < min_normal_exp ? min_normal_exp : exp2 - 1) - f.man_bits;
  const double q = std::ldexp(a, -step_exp);  // exact
  double n = std::floor(q);
  const double frac = q - n;
  if (frac > 0.5 || (frac == 0.5 && std::fmod(n, 2.0) != 0.0)) n += 1.0;
  const double rounded = std::ldexp(n, step_exp);
  if (rounded > f.max) return (f.ieee_special ? f.inf : encode_exact(f, f.max)) | sign_bit;
  return encode_exact(f, rounded) | sign_bit;
}

inline bool is_nan_bits(const Format& f, uint32_t v) { return std::isnan(decode(f, v)); }

}  // namespace nrt_emu::engine::testref
