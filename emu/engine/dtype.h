// dtype.h — the element types and reductions of the reference device engine.
//
// Shared by the engine (emu/engine, inside libnrt.so.1) and by tools that
// compute reference results (tools/nccom-test), as the static library
// `nrt_emu_dtype`. Pure computation: no I/O, no allocation in the kernels.
//
// Semantics (docs/decisions/emu-engine.md, "Element types and reductions"):
//  * Integers wrap (two's complement, modulo 2^bits) on sum and prod; min/max
//    compare as the signed/unsigned type. Avg on integers = sum, then
//    truncating division by the rank count (as the tool's reference does).
//  * fp16, bf16, fp8 (e4m3, e5m2) are computed in float and rounded back to
//    nearest-even once per reduce() call; fp32 in float, fp64 in double.
//    float holds every sum and product of two narrow values closely enough
//    that the result equals the exactly rounded one.
//    Avg on floats = sum, then multiply by 1/rank_n in the compute type.
//  * Float min/max are IEEE 754-2019 minimum/maximum: a NaN operand gives NaN
//    (NaN propagates, as it does through sum), and -0 < +0, so the result
//    does not depend on the order ranks are combined in. Which NaN (payload,
//    sign) a sum or product of two NaNs gives is unspecified.
//  * fp8 e4m3 is the OCP "E4M3FN" encoding (no infinities, 0x7F/0xFF NaN,
//    max 448; overflow and ±inf saturate to ±448); e5m2 is IEEE-like (inf,
//    NaN, max 57344; overflow rounds to ±inf).
//  * Values outside the DType/RedOp enums: dtype_size() is 0 (callers
//    validate with it), names are "unknown", reduce()/avg_finish() do nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace nrt_emu::engine {

// Values equal the C API's nrt_emu_dtype_t / nrt_emu_redop_t (nrt_emu.h).
enum class DType : int {
  Int8 = 0,
  Uint8,
  Int16,
  Uint16,
  Int32,
  Uint32,
  Int64,
  Uint64,
  Fp16,
  Bf16,
  Fp32,
  Fp64,
  Fp8E4M3,
  Fp8E5M2,
};
inline constexpr int kDTypeCount = 14;

enum class RedOp : int { Sum = 0, Prod, Min, Max, Avg };
inline constexpr int kRedOpCount = 5;

// Bytes per element (1, 2, 4 or 8).
size_t dtype_size(DType t);
// "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
// "fp16", "bf16", "fp32", "fp64", "fp8_e4m3", "fp8_e5m2".
const char* dtype_name(DType t);
// Accepts dtype_name() spellings and the usual aliases (nccl-tests: int8,
// uint8, int32, uint32, int64, uint64, half, float16, bfloat16, float,
// float32, double, float64, f8e4m3, f8e5m2; Neuron nccom-test: fp8e4m3 /
// fp8e5m2 too); case-insensitive, whole string. nullopt when unknown.
std::optional<DType> parse_dtype(std::string_view s);
bool is_float(DType t);
// "sum", "prod", "min", "max", "avg"; parse accepts those, case-insensitive.
const char* redop_name(RedOp op);
std::optional<RedOp> parse_redop(std::string_view s);

// dst[i] = a[i] op b[i] for i < n (Avg combines as Sum; see avg_finish).
// dst may alias a or b exactly (in place); partial overlaps are not allowed.
// Pointers are aligned to dtype_size(t); n = 0 touches nothing.
void reduce(DType t, RedOp op, void* dst, const void* a, const void* b, size_t n);

// Turns a sum over rank_n contributions into the average, in place.
// rank_n < 1 leaves buf unchanged.
void avg_finish(DType t, void* buf, size_t n, int rank_n);

// Element i of buf as a double / stored from a double (rounded to nearest
// even once, integers truncated toward zero and wrapped to the type's width;
// NaN and ±inf store 0 in integer types). buf need not be aligned. Loading
// a 64-bit integer beyond 2^53 gives the nearest double.
double load(DType t, const void* buf, size_t i);
void store(DType t, void* buf, size_t i, double v);

// Conversions of the narrow float formats (bit patterns in, float out).
// Exact in the narrow -> float direction; float -> narrow rounds to nearest
// even. NaN payloads are kept where they fit, so every narrow bit pattern
// survives narrow -> float -> narrow. Need the default FP environment
// (round to nearest, no flush-to-zero).
float fp16_to_float(uint16_t h);
uint16_t float_to_fp16(float f);
float bf16_to_float(uint16_t h);
uint16_t float_to_bf16(float f);
float fp8_e4m3_to_float(uint8_t v);
uint8_t float_to_fp8_e4m3(float f);
float fp8_e5m2_to_float(uint8_t v);
uint8_t float_to_fp8_e5m2(float f);

}  // namespace nrt_emu::engine
