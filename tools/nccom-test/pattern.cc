// Input patterns and reference results (see pattern.h and
// docs/tools/nccom-test.md, "Data check").
#include "pattern.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace nccom::nccomtest {
namespace {

namespace eng = nrt_emu::engine;

bool is_unsigned(DType t) {
  return t == DType::Uint8 || t == DType::Uint16 || t == DType::Uint32 || t == DType::Uint64;
}

// A well-spread 64-bit value per (rank, index) (splitmix64's finaliser), so a
// shifted or swapped block shows up as wrong elements.
uint64_t mix(int rank, size_t i) {
  uint64_t x = static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ull ^
               (static_cast<uint64_t>(rank) + 1) * 0xBF58476D1CE4E5B9ull;
  x ^= x >> 31;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 29;
  return x;
}

// A value in [-k, k] (or [0, k] for unsigned types) from h.
double spread(uint64_t h, int64_t k, bool uns) {
  const uint64_t span = uns ? static_cast<uint64_t>(k) + 1 : 2 * static_cast<uint64_t>(k) + 1;
  return uns ? static_cast<double>(h % span)
             : static_cast<double>(static_cast<int64_t>(h % span) - k);
}

// Unit roundoff (half an ulp at 1) and the smallest subnormal of a float type.
double unit_roundoff(DType t) {
  switch (t) {
    case DType::Fp16: return std::ldexp(1.0, -11);
    case DType::Bf16: return std::ldexp(1.0, -8);
    case DType::Fp32: return std::ldexp(1.0, -24);
    case DType::Fp64: return std::ldexp(1.0, -53);
    case DType::Fp8E4M3: return std::ldexp(1.0, -4);
    case DType::Fp8E5M2: return std::ldexp(1.0, -3);
    default: return 0.0;
  }
}
double smallest_subnormal(DType t) {
  switch (t) {
    case DType::Fp16: return std::ldexp(1.0, -24);
    case DType::Bf16: return std::ldexp(1.0, -133);
    case DType::Fp32: return std::numeric_limits<float>::denorm_min();
    case DType::Fp64: return std::numeric_limits<double>::denorm_min();
    case DType::Fp8E4M3: return std::ldexp(1.0, -9);
    case DType::Fp8E5M2: return std::ldexp(1.0, -16);
    default: return 0.0;
  }
}

}  // namespace

Layout layout_for(Op op, uint64_t bytes, size_t type_size, int nranks) {
  Layout l;
  const size_t n = static_cast<size_t>(nranks);
  const size_t total = static_cast<size_t>(bytes / type_size);
  switch (op) {
    case Op::AllReduce:
    case Op::Broadcast:
    case Op::Reduce:
    case Op::SendRecv: l.count = l.send_elems = l.recv_elems = l.elems = total; break;
    case Op::AllGather:
      l.count = l.send_elems = total / n;
      l.recv_elems = l.elems = l.count * n;
      break;
    case Op::ReduceScatter:
      l.count = l.recv_elems = total / n;
      l.send_elems = l.elems = l.count * n;
      break;
    case Op::AllToAll:
      l.count = total / n;
      l.send_elems = l.recv_elems = l.elems = l.count * n;
      break;
  }
  l.bytes = static_cast<uint64_t>(l.elems) * type_size;
  return l;
}

size_t inplace_send_offset(Op op, const Layout& l, int rank) {
  return op == Op::AllGather ? static_cast<size_t>(rank) * l.count : 0;
}
size_t inplace_recv_offset(Op op, const Layout& l, int rank) {
  return op == Op::ReduceScatter ? static_cast<size_t>(rank) * l.count : 0;
}
size_t inplace_elems(Op, const Layout& l) { return std::max(l.send_elems, l.recv_elems); }

int64_t exact_limit(DType t) {
  switch (t) {
    case DType::Int8: return 127;
    case DType::Uint8: return 255;
    case DType::Int16: return 32767;
    case DType::Uint16: return 65535;
    case DType::Fp16: return 2048;
    case DType::Bf16: return 256;
    case DType::Fp8E4M3: return 16;
    case DType::Fp8E5M2: return 8;
    default: return int64_t{1} << 20;  // 32/64-bit integers, fp32, fp64
  }
}

double pattern_value(Op op, DType t, RedOp r, int rank, int nranks, size_t i) {
  const int64_t m = exact_limit(t);
  const bool uns = is_unsigned(t);
  const uint64_t h = mix(rank, i);
  if (!op_reduces(op)) return spread(h, m, uns);  // copies: any exact value
  switch (r) {
    case RedOp::Sum:
    case RedOp::Avg: {
      // Only every g-th rank contributes at an index, so at most nz values
      // of magnitude ≤ k meet: every partial sum stays within m, exact.
      const int64_t g = std::max<int64_t>(1, (nranks + m - 1) / m);
      const int64_t nz = (nranks + g - 1) / g;
      const int64_t k = std::max<int64_t>(1, std::min<int64_t>(m / nz, 1000));
      if ((static_cast<int64_t>(rank) + static_cast<int64_t>(i % static_cast<size_t>(g))) % g != 0)
        return 0.0;
      return spread(h, k, uns);
    }
    case RedOp::Prod: {
      // ±1 everywhere but one rank per index, which gives 1, 2 or 3.
      const bool special = i % static_cast<size_t>(nranks) == static_cast<size_t>(rank);
      const double mag = special ? static_cast<double>(1 + (h >> 8) % 3) : 1.0;
      return (!uns && (h & 1)) ? -mag : mag;
    }
    case RedOp::Min:
    case RedOp::Max: return spread(h, std::min<int64_t>(m, 1000), uns);
  }
  return 0.0;
}

void fill_input(Op op, DType t, RedOp r, int rank, int nranks, void* buf, size_t n) {
  for (size_t i = 0; i < n; ++i) eng::store(t, buf, i, pattern_value(op, t, r, rank, nranks, i));
}

std::vector<unsigned char> expected_output(Op op, DType t, RedOp r, int rank, int nranks, int root,
                                           const Layout& l) {
  const size_t ts = eng::dtype_size(t);
  const size_t cnt = l.count;
  std::vector<unsigned char> in(l.send_elems * ts);
  auto input = [&](int j) { fill_input(op, t, r, j, nranks, in.data(), l.send_elems); };
  std::vector<unsigned char> out;
  switch (op) {
    case Op::AllReduce:
    case Op::Reduce:
    case Op::ReduceScatter: {
      if (op == Op::Reduce && rank != root) return {};
      const size_t from = op == Op::ReduceScatter ? static_cast<size_t>(rank) * cnt * ts : 0;
      out.resize(cnt * ts);
      for (int j = 0; j < nranks; ++j) {
        input(j);
        if (cnt == 0) continue;
        if (j == 0) {
          std::memcpy(out.data(), in.data() + from, cnt * ts);
        } else {
          eng::reduce(t, r, out.data(), out.data(), in.data() + from, cnt);
        }
      }
      if (r == RedOp::Avg && cnt > 0) eng::avg_finish(t, out.data(), cnt, nranks);
      return out;
    }
    case Op::AllGather:
    case Op::AllToAll: {
      out.resize(l.recv_elems * ts);
      const size_t from = op == Op::AllToAll ? static_cast<size_t>(rank) * cnt * ts : 0;
      for (int j = 0; j < nranks; ++j) {
        input(j);
        if (cnt > 0)
          std::memcpy(out.data() + static_cast<size_t>(j) * cnt * ts, in.data() + from, cnt * ts);
      }
      return out;
    }
    case Op::Broadcast:
    case Op::SendRecv: input(op == Op::Broadcast ? root : (rank + nranks - 1) % nranks); return in;
  }
  return out;
}

double tolerance(DType t, RedOp r, Op op, double expected) {
  if (!eng::is_float(t) || !op_reduces(op) || r == RedOp::Min || r == RedOp::Max) return 0.0;
  // The pattern makes every partial sum and product exact in the type, in
  // any order; a correct engine may round only the final value (avg's
  // scaling, or a wider compute type rounded back to storage): half an ulp,
  // doubled for the 1/n factor's own rounding, plus a subnormal step.
  return 2.0 * unit_roundoff(t) * std::fabs(expected) +
         (r == RedOp::Avg ? smallest_subnormal(t) : 0.0);
}

uint64_t count_wrong(Op op, DType t, RedOp r, const void* got, const void* expected, size_t n) {
  const size_t ts = eng::dtype_size(t);
  const auto* g = static_cast<const unsigned char*>(got);
  const auto* e = static_cast<const unsigned char*>(expected);
  uint64_t wrong = 0;
  if (!eng::is_float(t)) {
    for (size_t i = 0; i < n; ++i) wrong += std::memcmp(g + i * ts, e + i * ts, ts) != 0;
    return wrong;
  }
  for (size_t i = 0; i < n; ++i) {
    const double gv = eng::load(t, got, i), ev = eng::load(t, expected, i);
    // NaN fails the comparison, so it counts as wrong.
    wrong += !(std::fabs(gv - ev) <= tolerance(t, r, op, ev));
  }
  return wrong;
}

}  // namespace nccom::nccomtest
