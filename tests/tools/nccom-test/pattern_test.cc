// Buffer shapes (nccl-tests' rounding), input patterns that keep every
// result exact, the reference results and the wrong-element count.
#include "pattern.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace nccom::nccomtest {
namespace {

namespace eng = nrt_emu::engine;

constexpr DType kAllTypes[] = {DType::Int8,    DType::Uint8,  DType::Int16, DType::Uint16,
                               DType::Int32,   DType::Uint32, DType::Int64, DType::Uint64,
                               DType::Fp16,    DType::Bf16,   DType::Fp32,  DType::Fp64,
                               DType::Fp8E4M3, DType::Fp8E5M2};
constexpr Op kAllOps[] = {Op::AllReduce, Op::AllGather, Op::ReduceScatter, Op::SendRecv,
                          Op::AllToAll,  Op::Broadcast, Op::Reduce};
constexpr RedOp kAllRedOps[] = {RedOp::Sum, RedOp::Prod, RedOp::Min, RedOp::Max, RedOp::Avg};

TEST(NccomTestPattern, LayoutsRoundLikeNcclTests) {
  // 100 B of fp32 over 4 ranks: 25 elements, 6 per rank, 24 in all, 96 B.
  Layout l = layout_for(Op::AllGather, 100, 4, 4);
  EXPECT_EQ(l.count, 6u);
  EXPECT_EQ(l.send_elems, 6u);
  EXPECT_EQ(l.recv_elems, 24u);
  EXPECT_EQ(l.elems, 24u);
  EXPECT_EQ(l.bytes, 96u);
  l = layout_for(Op::ReduceScatter, 100, 4, 4);
  EXPECT_EQ(l.count, 6u);
  EXPECT_EQ(l.send_elems, 24u);
  EXPECT_EQ(l.recv_elems, 6u);
  EXPECT_EQ(l.bytes, 96u);
  l = layout_for(Op::AllToAll, 100, 4, 4);
  EXPECT_EQ(l.count, 6u);
  EXPECT_EQ(l.send_elems, 24u);
  EXPECT_EQ(l.recv_elems, 24u);
  l = layout_for(Op::AllReduce, 10, 4, 3);
  EXPECT_EQ(l.count, 2u);
  EXPECT_EQ(l.bytes, 8u);
  // Too small to give every rank an element: a zero-size operation.
  l = layout_for(Op::AllGather, 8, 4, 4);
  EXPECT_EQ(l.count, 0u);
  EXPECT_EQ(l.bytes, 0u);
}

TEST(NccomTestPattern, InPlaceOffsetsFollowNccl) {
  const Layout l = layout_for(Op::AllGather, 64, 4, 4);  // 4 per rank
  EXPECT_EQ(inplace_send_offset(Op::AllGather, l, 3), 12u);
  EXPECT_EQ(inplace_recv_offset(Op::AllGather, l, 3), 0u);
  const Layout r = layout_for(Op::ReduceScatter, 64, 4, 4);
  EXPECT_EQ(inplace_send_offset(Op::ReduceScatter, r, 3), 0u);
  EXPECT_EQ(inplace_recv_offset(Op::ReduceScatter, r, 3), 12u);
  EXPECT_EQ(inplace_elems(Op::ReduceScatter, r), 16u);
  EXPECT_EQ(inplace_send_offset(Op::AllReduce, r, 3), 0u);
}

// Every input value is one the type holds exactly.
TEST(NccomTestPattern, InputsAreExactInEveryType) {
  for (DType t : kAllTypes) {
    std::vector<unsigned char> buf(64 * 8);
    for (Op op : kAllOps) {
      for (RedOp r : kAllRedOps) {
        for (int n : {1, 3, 8, 64}) {
          for (int rank : {0, n - 1}) {
            fill_input(op, t, r, rank, n, buf.data(), 64);
            for (size_t i = 0; i < 64; ++i) {
              ASSERT_EQ(eng::load(t, buf.data(), i), pattern_value(op, t, r, rank, n, i))
                  << eng::dtype_name(t) << " " << op_name(op) << " rank " << rank << "/" << n
                  << " i " << i;
            }
          }
        }
      }
    }
  }
}

// Sums: at every index the magnitudes of all ranks add up to at most the
// type's exact limit, so every partial sum, in any order, is exact.
TEST(NccomTestPattern, EveryPartialSumIsExact) {
  for (DType t : kAllTypes) {
    for (int n : {1, 2, 3, 4, 8, 16, 64}) {
      bool rank_seen[64] = {};
      for (size_t i = 0; i < 256; ++i) {
        double total = 0;
        for (int j = 0; j < n; ++j) {
          const double v = pattern_value(Op::AllReduce, t, RedOp::Sum, j, n, i);
          total += std::fabs(v);
          rank_seen[j] |= v != 0;
        }
        ASSERT_LE(total, static_cast<double>(exact_limit(t)))
            << eng::dtype_name(t) << " n " << n << " i " << i;
      }
      // Every rank's data matters somewhere (a lost contribution shows).
      for (int j = 0; j < n; ++j)
        EXPECT_TRUE(rank_seen[j]) << eng::dtype_name(t) << " rank " << j << "/" << n;
    }
  }
}

TEST(NccomTestPattern, ProductsStayWithinThreeInMagnitude) {
  for (int n : {1, 2, 5, 64}) {
    for (size_t i = 0; i < 100; ++i) {
      double p = 1;
      for (int j = 0; j < n; ++j)
        p *= pattern_value(Op::AllReduce, DType::Fp8E5M2, RedOp::Prod, j, n, i);
      EXPECT_LE(std::fabs(p), 3.0);
      EXPECT_GE(std::fabs(p), 1.0);
    }
  }
}

TEST(NccomTestPattern, ReferenceAllReduceIsTheSumOverRanks) {
  const int n = 3;
  const Layout l = layout_for(Op::AllReduce, 40, 4, n);  // 10 int32
  const auto want = expected_output(Op::AllReduce, DType::Int32, RedOp::Sum, 1, n, 0, l);
  ASSERT_EQ(want.size(), 40u);
  for (size_t i = 0; i < 10; ++i) {
    int32_t v;
    std::memcpy(&v, want.data() + i * 4, 4);
    double sum = 0;
    for (int j = 0; j < n; ++j)
      sum += pattern_value(Op::AllReduce, DType::Int32, RedOp::Sum, j, n, i);
    EXPECT_EQ(v, static_cast<int32_t>(sum)) << i;
  }
  // Max and avg (integer avg truncates toward zero after the sum).
  const auto mx = expected_output(Op::AllReduce, DType::Int16, RedOp::Max, 0, n, 0,
                                  layout_for(Op::AllReduce, 20, 2, n));
  const auto av = expected_output(Op::AllReduce, DType::Int16, RedOp::Avg, 0, n, 0,
                                  layout_for(Op::AllReduce, 20, 2, n));
  for (size_t i = 0; i < 10; ++i) {
    double m = -1e9, s = 0;
    for (int j = 0; j < n; ++j) {
      m = std::max(m, pattern_value(Op::AllReduce, DType::Int16, RedOp::Max, j, n, i));
      s += pattern_value(Op::AllReduce, DType::Int16, RedOp::Avg, j, n, i);
    }
    EXPECT_EQ(eng::load(DType::Int16, mx.data(), i), m);
    EXPECT_EQ(eng::load(DType::Int16, av.data(), i), std::trunc(s / n));
  }
}

TEST(NccomTestPattern, ReferenceDataMovement) {
  const int n = 4;
  const Layout l = layout_for(Op::AllGather, 4 * 4 * 3, 4, n);  // 3 fp32 per rank
  const auto g = expected_output(Op::AllGather, DType::Fp32, RedOp::Sum, 2, n, 0, l);
  ASSERT_EQ(g.size(), 48u);
  for (int j = 0; j < n; ++j) {
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(eng::load(DType::Fp32, g.data(), j * 3 + i),
                pattern_value(Op::AllGather, DType::Fp32, RedOp::Sum, j, n, i));
    }
  }
  // All-to-all: block j of rank 2's output is block 2 of rank j's input.
  const auto a = expected_output(Op::AllToAll, DType::Fp32, RedOp::Sum, 2, n, 0,
                                 layout_for(Op::AllToAll, 48, 4, n));
  for (int j = 0; j < n; ++j) {
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(eng::load(DType::Fp32, a.data(), j * 3 + i),
                pattern_value(Op::AllToAll, DType::Fp32, RedOp::Sum, j, n, 2 * 3 + i));
    }
  }
  // Reduce-scatter: rank 1 gets the reduction of block 1.
  const auto rs = expected_output(Op::ReduceScatter, DType::Int32, RedOp::Sum, 1, n, 0,
                                  layout_for(Op::ReduceScatter, 48, 4, n));
  ASSERT_EQ(rs.size(), 12u);
  for (size_t i = 0; i < 3; ++i) {
    double s = 0;
    for (int j = 0; j < n; ++j)
      s += pattern_value(Op::ReduceScatter, DType::Int32, RedOp::Sum, j, n, 3 + i);
    EXPECT_EQ(eng::load(DType::Int32, rs.data(), i), s);
  }
  // Send/recv: the left neighbour's input; broadcast: the root's; a
  // reduce's non-root ranks have nothing defined.
  const Layout s = layout_for(Op::SendRecv, 16, 4, n);
  const auto sr = expected_output(Op::SendRecv, DType::Fp32, RedOp::Sum, 0, n, 0, s);
  EXPECT_EQ(eng::load(DType::Fp32, sr.data(), 1),
            pattern_value(Op::SendRecv, DType::Fp32, RedOp::Sum, 3, n, 1));
  const auto bc = expected_output(Op::Broadcast, DType::Fp32, RedOp::Sum, 0, n, 2, s);
  EXPECT_EQ(eng::load(DType::Fp32, bc.data(), 1),
            pattern_value(Op::Broadcast, DType::Fp32, RedOp::Sum, 2, n, 1));
  EXPECT_TRUE(expected_output(Op::Reduce, DType::Fp32, RedOp::Sum, 1, n, 2, s).empty());
  EXPECT_EQ(expected_output(Op::Reduce, DType::Fp32, RedOp::Sum, 2, n, 2, s).size(), 16u);
}

TEST(NccomTestPattern, CountWrong) {
  const Layout l = layout_for(Op::AllReduce, 64, 4, 2);
  auto want = expected_output(Op::AllReduce, DType::Fp32, RedOp::Sum, 0, 2, 0, l);
  auto got = want;
  EXPECT_EQ(count_wrong(Op::AllReduce, DType::Fp32, RedOp::Sum, got.data(), want.data(), 16), 0u);
  eng::store(DType::Fp32, got.data(), 3, eng::load(DType::Fp32, got.data(), 3) + 1);
  eng::store(DType::Fp32, got.data(), 7, std::nan(""));
  EXPECT_EQ(count_wrong(Op::AllReduce, DType::Fp32, RedOp::Sum, got.data(), want.data(), 16), 2u);
  // Integers compare bit for bit.
  auto wi = expected_output(Op::AllReduce, DType::Int64, RedOp::Sum, 0, 2, 0,
                            layout_for(Op::AllReduce, 64, 8, 2));
  auto gi = wi;
  gi[8 * 5] ^= 1;
  EXPECT_EQ(count_wrong(Op::AllReduce, DType::Int64, RedOp::Sum, gi.data(), wi.data(), 8), 1u);
}

TEST(NccomTestPattern, Tolerances) {
  EXPECT_EQ(tolerance(DType::Int32, RedOp::Sum, Op::AllReduce, 100), 0);
  EXPECT_EQ(tolerance(DType::Fp32, RedOp::Max, Op::AllReduce, 100), 0);
  EXPECT_EQ(tolerance(DType::Fp32, RedOp::Sum, Op::AllGather, 100), 0);  // copies are exact
  EXPECT_DOUBLE_EQ(tolerance(DType::Fp16, RedOp::Sum, Op::AllReduce, 100),
                   2 * std::ldexp(1.0, -11) * 100);
  EXPECT_DOUBLE_EQ(tolerance(DType::Bf16, RedOp::Prod, Op::Reduce, -3),
                   2 * std::ldexp(1.0, -8) * 3);
  EXPECT_DOUBLE_EQ(tolerance(DType::Fp8E4M3, RedOp::Avg, Op::AllReduce, 0), std::ldexp(1.0, -9));
  // fp8 e5m2 sum of 3 with its half-ulp slack: 3 ± 0.75 still excludes 2 and 4.
  EXPECT_LT(tolerance(DType::Fp8E5M2, RedOp::Sum, Op::AllReduce, 3), 1.0);
}

}  // namespace
}  // namespace nccom::nccomtest
