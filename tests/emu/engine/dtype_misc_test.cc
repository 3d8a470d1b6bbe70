// EngineDType: names, sizes, parsing (aliases, case, unknown names) and the
// load()/store() element access with its rounding and wrapping.
#include "dtype.h"
#include "suite.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

namespace nrt_emu::engine {
namespace {

TEST(ENGINE_DTYPE_SUITE, NamesSizesAndKinds) {
  const char* names[] = {"int8",   "uint8", "int16", "uint16", "int32", "uint32",   "int64",
                         "uint64", "fp16",  "bf16",  "fp32",   "fp64",  "fp8_e4m3", "fp8_e5m2"};
  const size_t sizes[] = {1, 1, 2, 2, 4, 4, 8, 8, 2, 2, 4, 8, 1, 1};
  for (int i = 0; i < kDTypeCount; ++i) {
    const DType t = static_cast<DType>(i);
    EXPECT_STREQ(dtype_name(t), names[i]);
    EXPECT_EQ(dtype_size(t), sizes[i]) << names[i];
    EXPECT_EQ(is_float(t), i >= static_cast<int>(DType::Fp16)) << names[i];
    EXPECT_EQ(parse_dtype(names[i]), t) << names[i];
  }
  const char* ops[] = {"sum", "prod", "min", "max", "avg"};
  for (int i = 0; i < kRedOpCount; ++i) {
    EXPECT_STREQ(redop_name(static_cast<RedOp>(i)), ops[i]);
    EXPECT_EQ(parse_redop(ops[i]), static_cast<RedOp>(i));
  }
  // Values outside the enums: size 0 (how callers validate), a name anyway.
  EXPECT_EQ(dtype_size(static_cast<DType>(14)), 0u);
  EXPECT_EQ(dtype_size(static_cast<DType>(-1)), 0u);
  EXPECT_STREQ(dtype_name(static_cast<DType>(99)), "unknown");
  EXPECT_FALSE(is_float(static_cast<DType>(99)));
  EXPECT_STREQ(redop_name(static_cast<RedOp>(5)), "unknown");
  int32_t x = 1, y = 2, d = 7;
  reduce(static_cast<DType>(99), RedOp::Sum, &d, &x, &y, 1);
  EXPECT_EQ(d, 7);  // nothing done
  reduce(DType::Int32, static_cast<RedOp>(9), &d, &x, &y, 1);
  EXPECT_EQ(d, 7);
}

TEST(ENGINE_DTYPE_SUITE, ParseAliasesAndCase) {
  EXPECT_EQ(parse_dtype("half"), DType::Fp16);
  EXPECT_EQ(parse_dtype("float16"), DType::Fp16);
  EXPECT_EQ(parse_dtype("bfloat16"), DType::Bf16);
  EXPECT_EQ(parse_dtype("float"), DType::Fp32);
  EXPECT_EQ(parse_dtype("float32"), DType::Fp32);
  EXPECT_EQ(parse_dtype("double"), DType::Fp64);
  EXPECT_EQ(parse_dtype("float64"), DType::Fp64);
  EXPECT_EQ(parse_dtype("fp8e4m3"), DType::Fp8E4M3);
  EXPECT_EQ(parse_dtype("fp8e5m2"), DType::Fp8E5M2);
  EXPECT_EQ(parse_dtype("f8e4m3"), DType::Fp8E4M3);
  EXPECT_EQ(parse_dtype("f8e5m2"), DType::Fp8E5M2);
  EXPECT_EQ(parse_dtype("FP32"), DType::Fp32);
  EXPECT_EQ(parse_dtype("BFloat16"), DType::Bf16);
  EXPECT_EQ(parse_dtype("Uint64"), DType::Uint64);
  EXPECT_EQ(parse_redop("SUM"), RedOp::Sum);
  EXPECT_EQ(parse_redop("Avg"), RedOp::Avg);
}

TEST(ENGINE_DTYPE_SUITE, ParseUnknown) {
  for (const char* s :
       {"", "int", "fp", "fp32 ", " fp32", "fp8", "float8", "int128", "fp32x", "e4m3"})
    EXPECT_EQ(parse_dtype(s), std::nullopt) << '"' << s << '"';
  for (const char* s : {"", "add", "mean", "sum ", "minimum", "product"})
    EXPECT_EQ(parse_redop(s), std::nullopt) << '"' << s << '"';
  const std::string with_nul("fp32\0", 5);
  EXPECT_EQ(parse_dtype(with_nul), std::nullopt);
}

TEST(ENGINE_DTYPE_SUITE, LoadStoreIntegers) {
  uint8_t buf[16];
  store(DType::Int8, buf, 0, 300.7);  // trunc 300, mod 256 = 44
  EXPECT_EQ(int8_t(buf[0]), 44);
  store(DType::Int8, buf, 0, -129.0);
  EXPECT_EQ(int8_t(buf[0]), 127);
  EXPECT_EQ(load(DType::Int8, buf, 0), 127.0);
  store(DType::Int8, buf, 1, -0.9);  // toward zero
  EXPECT_EQ(int8_t(buf[1]), 0);
  store(DType::Uint8, buf, 2, -1.0);
  EXPECT_EQ(buf[2], 255);
  EXPECT_EQ(load(DType::Uint8, buf, 2), 255.0);
  store(DType::Int16, buf, 1, NAN);  // element 1 = bytes 2..3
  EXPECT_EQ(load(DType::Int16, buf, 1), 0.0);
  store(DType::Int16, buf, 1, INFINITY);
  EXPECT_EQ(load(DType::Int16, buf, 1), 0.0);
  store(DType::Uint32, buf, 1, -1.0);
  EXPECT_EQ(load(DType::Uint32, buf, 1), 4294967295.0);
  store(DType::Int32, buf, 1, 2147483648.0);  // 2^31 wraps to INT32_MIN
  EXPECT_EQ(load(DType::Int32, buf, 1), -2147483648.0);
  store(DType::Int64, buf, 1, 0x1p63);
  int64_t i64;
  std::memcpy(&i64, buf + 8, 8);
  EXPECT_EQ(i64, INT64_MIN);
  store(DType::Uint64, buf, 1, 0x1p64 + 0x1p12);  // exact double; mod 2^64 = 4096
  uint64_t u64;
  std::memcpy(&u64, buf + 8, 8);
  EXPECT_EQ(u64, 4096u);
  store(DType::Uint64, buf, 1, -0x1p12);
  std::memcpy(&u64, buf + 8, 8);
  EXPECT_EQ(u64, UINT64_MAX - 4095);
  store(DType::Int64, buf, 0, -1e300);  // a multiple of 2^64: wraps to 0
  std::memcpy(&i64, buf, 8);
  EXPECT_EQ(i64, 0);
}

TEST(ENGINE_DTYPE_SUITE, LoadStoreFloats) {
  uint8_t buf[16];
  store(DType::Fp16, buf, 1, 1.0);
  EXPECT_EQ(buf[2] | buf[3] << 8, 0x3C00);
  EXPECT_EQ(load(DType::Fp16, buf, 1), 1.0);
  // A hair above a tie: double -> float would land on the tie and round to
  // even (0x3C00); rounding once gives 0x3C01.
  store(DType::Fp16, buf, 0, 1.0 + 0x1p-11 + 0x1p-40);
  EXPECT_EQ(buf[0] | buf[1] << 8, 0x3C01);
  store(DType::Fp16, buf, 0, 1.0 + 0x1p-11 - 0x1p-40);
  EXPECT_EQ(buf[0] | buf[1] << 8, 0x3C00);
  store(DType::Fp16, buf, 0, 1.0 + 0x1p-11);  // the tie itself: even
  EXPECT_EQ(buf[0] | buf[1] << 8, 0x3C00);
  store(DType::Bf16, buf, 0, 1.0 + 0x1p-8 + 0x1p-40);
  EXPECT_EQ(buf[0] | buf[1] << 8, 0x3F81);
  store(DType::Bf16, buf, 0, 1e300);  // beyond float: inf
  EXPECT_EQ(buf[0] | buf[1] << 8, 0x7F80);
  store(DType::Fp8E4M3, buf, 0, 1.0 + 0x1p-4 + 0x1p-50);
  EXPECT_EQ(buf[0], 0x39);
  store(DType::Fp8E4M3, buf, 0, -1e300);  // saturates
  EXPECT_EQ(buf[0], 0xFE);
  store(DType::Fp8E5M2, buf, 0, 0x1p-17 + 0x1p-60);  // just above the subnormal tie
  EXPECT_EQ(buf[0], 0x01);
  store(DType::Fp8E5M2, buf, 0, 1e-300);  // below everything: +0
  EXPECT_EQ(buf[0], 0x00);
  store(DType::Fp8E5M2, buf, 0, NAN);
  EXPECT_TRUE(std::isnan(load(DType::Fp8E5M2, buf, 0)));
  store(DType::Fp32, buf, 1, 0.1);
  float f;
  std::memcpy(&f, buf + 4, 4);
  EXPECT_EQ(f, 0.1f);
  store(DType::Fp64, buf, 1, 0.1);
  EXPECT_EQ(load(DType::Fp64, buf, 1), 0.1);
  EXPECT_EQ(load(DType::Bf16, std::array<uint16_t, 1>{0x3F80}.data(), 0), 1.0);
  const uint64_t big = UINT64_MAX;
  EXPECT_EQ(load(DType::Uint64, &big, 0), 0x1p64);  // nearest double
}

}  // namespace
}  // namespace nrt_emu::engine
