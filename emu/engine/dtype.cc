// dtype.cc — names, sizes, element access and the exported narrow-float
// conversions of the reference engine's element types. The reduction kernels
// are in reduce_kernels.cc, the conversions themselves in reduce_formats.h.
#include "dtype.h"

#include "reduce_formats.h"

#include <cmath>
#include <cstring>

namespace nrt_emu::engine {
namespace {

struct TypeInfo {
  const char* name;
  size_t size;
  bool is_float;
};

// Indexed by DType.
constexpr TypeInfo kTypes[kDTypeCount] = {
    {"int8", 1, false},    {"uint8", 1, false},   {"int16", 2, false}, {"uint16", 2, false},
    {"int32", 4, false},   {"uint32", 4, false},  {"int64", 8, false}, {"uint64", 8, false},
    {"fp16", 2, true},     {"bf16", 2, true},     {"fp32", 4, true},   {"fp64", 8, true},
    {"fp8_e4m3", 1, true}, {"fp8_e5m2", 1, true},
};

constexpr const char* kRedOpNames[kRedOpCount] = {"sum", "prod", "min", "max", "avg"};

// Other spellings: nccl-tests' (-d half, float, double, bfloat16, f8e4m3, ...)
// and the undecorated fp8 names.
struct Alias {
  const char* name;
  DType type;
};
constexpr Alias kAliases[] = {
    {"half", DType::Fp16},      {"float16", DType::Fp16},    {"bfloat16", DType::Bf16},
    {"float", DType::Fp32},     {"float32", DType::Fp32},    {"double", DType::Fp64},
    {"float64", DType::Fp64},   {"fp8e4m3", DType::Fp8E4M3}, {"fp8e5m2", DType::Fp8E5M2},
    {"f8e4m3", DType::Fp8E4M3}, {"f8e5m2", DType::Fp8E5M2},
};

const TypeInfo* info(DType t) {
  const int i = static_cast<int>(t);
  return i >= 0 && i < kDTypeCount ? &kTypes[i] : nullptr;
}

bool iequals(std::string_view s, const char* name) {
  const size_t len = std::strlen(name);
  if (s.size() != len) return false;
  for (size_t i = 0; i < len; ++i) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
    if (c != name[i]) return false;
  }
  return true;
}

// A double rounded to float "to odd" (truncate, then set the last bit if
// anything was lost). Rounding that float to nearest-even in a format with
// at least two fewer mantissa bits gives the correctly rounded result of the
// double; a plain double -> float -> narrow would round twice and could
// break ties the wrong way.
float to_float_round_odd(double v) {
  float f = static_cast<float>(v);  // nearest even
  if (!std::isfinite(f) || static_cast<double>(f) == v) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);  // truncate
  return fmt::from_bits(fmt::bits(f) | 1u);
}

// Truncated toward zero, then reduced modulo 2^64 (NaN and infinities: 0).
uint64_t to_wrapped_u64(double v) {
  if (!std::isfinite(v)) return 0;
  const double r = std::fmod(std::trunc(v), 0x1p64);  // exact, |r| < 2^64
  return r >= 0 ? static_cast<uint64_t>(r) : uint64_t{0} - static_cast<uint64_t>(-r);
}

template <class T>
T at(const void* buf, size_t i) {
  T v;
  std::memcpy(&v, static_cast<const char*>(buf) + i * sizeof(T), sizeof(T));
  return v;
}

template <class T>
void put(void* buf, size_t i, T v) {
  std::memcpy(static_cast<char*>(buf) + i * sizeof(T), &v, sizeof(T));
}

}  // namespace

size_t dtype_size(DType t) {
  const TypeInfo* ti = info(t);
  return ti != nullptr ? ti->size : 0;
}

const char* dtype_name(DType t) {
  const TypeInfo* ti = info(t);
  return ti != nullptr ? ti->name : "unknown";
}

bool is_float(DType t) {
  const TypeInfo* ti = info(t);
  return ti != nullptr && ti->is_float;
}

std::optional<DType> parse_dtype(std::string_view s) {
  for (int i = 0; i < kDTypeCount; ++i)
    if (iequals(s, kTypes[i].name)) return static_cast<DType>(i);
  for (const Alias& a : kAliases)
    if (iequals(s, a.name)) return a.type;
  return std::nullopt;
}

const char* redop_name(RedOp op) {
  const int i = static_cast<int>(op);
  return i >= 0 && i < kRedOpCount ? kRedOpNames[i] : "unknown";
}

std::optional<RedOp> parse_redop(std::string_view s) {
  for (int i = 0; i < kRedOpCount; ++i)
    if (iequals(s, kRedOpNames[i])) return static_cast<RedOp>(i);
  return std::nullopt;
}

double load(DType t, const void* buf, size_t i) {
  switch (t) {
    case DType::Int8: return at<int8_t>(buf, i);
    case DType::Uint8: return at<uint8_t>(buf, i);
    case DType::Int16: return at<int16_t>(buf, i);
    case DType::Uint16: return at<uint16_t>(buf, i);
    case DType::Int32: return at<int32_t>(buf, i);
    case DType::Uint32: return at<uint32_t>(buf, i);
    case DType::Int64: return static_cast<double>(at<int64_t>(buf, i));
    case DType::Uint64: return static_cast<double>(at<uint64_t>(buf, i));
    case DType::Fp16: return fmt::fp16_to_float(at<uint16_t>(buf, i));
    case DType::Bf16: return fmt::bf16_to_float(at<uint16_t>(buf, i));
    case DType::Fp32: return at<float>(buf, i);
    case DType::Fp64: return at<double>(buf, i);
    case DType::Fp8E4M3: return fmt::fp8_e4m3_to_float(at<uint8_t>(buf, i));
    case DType::Fp8E5M2: return fmt::fp8_e5m2_to_float(at<uint8_t>(buf, i));
  }
  return 0.0;
}

void store(DType t, void* buf, size_t i, double v) {
  switch (t) {
    case DType::Int8:
    case DType::Uint8: return put(buf, i, static_cast<uint8_t>(to_wrapped_u64(v)));
    case DType::Int16:
    case DType::Uint16: return put(buf, i, static_cast<uint16_t>(to_wrapped_u64(v)));
    case DType::Int32:
    case DType::Uint32: return put(buf, i, static_cast<uint32_t>(to_wrapped_u64(v)));
    case DType::Int64:
    case DType::Uint64: return put(buf, i, to_wrapped_u64(v));
    case DType::Fp16: return put(buf, i, fmt::float_to_fp16(to_float_round_odd(v)));
    case DType::Bf16: return put(buf, i, fmt::float_to_bf16(to_float_round_odd(v)));
    case DType::Fp32: return put(buf, i, static_cast<float>(v));
    case DType::Fp64: return put(buf, i, v);
    case DType::Fp8E4M3: return put(buf, i, fmt::float_to_fp8_e4m3(to_float_round_odd(v)));
    case DType::Fp8E5M2: return put(buf, i, fmt::float_to_fp8_e5m2(to_float_round_odd(v)));
  }
}

float fp16_to_float(uint16_t h) { return fmt::fp16_to_float(h); }
uint16_t float_to_fp16(float f) { return fmt::float_to_fp16(f); }
float bf16_to_float(uint16_t h) { return fmt::bf16_to_float(h); }
uint16_t float_to_bf16(float f) { return fmt::float_to_bf16(f); }
float fp8_e4m3_to_float(uint8_t v) { return fmt::fp8_e4m3_to_float(v); }
uint8_t float_to_fp8_e4m3(float f) { return fmt::float_to_fp8_e4m3(f); }
float fp8_e5m2_to_float(uint8_t v) { return fmt::fp8_e5m2_to_float(v); }
uint8_t float_to_fp8_e5m2(float f) { return fmt::float_to_fp8_e5m2(f); }

}  // namespace nrt_emu::engine
