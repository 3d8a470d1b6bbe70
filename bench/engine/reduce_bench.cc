// reduce_bench — throughput of the reference engine's reduce() kernels.
//
// For each (type, op, size) it runs dst = a op b out of place over one buffer
// of `size` bytes per operand, repeated until at least 0.2 s of this
// thread's CPU time have passed, and reports the best of five such runs as
//   GB/s  = operand bytes / time (what an all-reduce step gets through), and
//   mem   = 3 x that (two reads and one write: the memory traffic).
// Time is the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), not wall time, so
// that other processes on a shared machine do not count against the kernel;
// the wall-clock figure is printed next to it.
// Default: sum on fp32, fp16, bf16, fp8_e4m3, int64 at 1 MiB (cache) and 64 MiB
// (memory). --all: every type x op at 1 MiB.
#include "dtype.h"

#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

namespace eng = nrt_emu::engine;

namespace {

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Rate {
  double cpu_gbps = 0;
  double wall_gbps = 0;
};

// Values that stay finite and away from overflow for every type and op, so
// the kernels run their ordinary path.
void fill(eng::DType t, std::vector<unsigned char>& buf, size_t n, int seed) {
  for (size_t i = 0; i < n; ++i) eng::store(t, buf.data(), i, double(1 + (i * 7 + seed) % 3) * 0.5);
}

Rate measure(eng::DType t, eng::RedOp op, size_t bytes) {
  const size_t n = bytes / eng::dtype_size(t);
  std::vector<unsigned char> a(bytes), b(bytes), d(bytes);
  fill(t, a, n, 1);
  fill(t, b, n, 2);
  eng::reduce(t, op, d.data(), a.data(), b.data(), n);  // warm up, fault pages in
  Rate best;
  for (int run = 0; run < 5; ++run) {
    size_t iters = 0;
    const double w0 = wall_seconds(), c0 = cpu_seconds();
    double c1 = c0;
    while (c1 - c0 < 0.2) {
      eng::reduce(t, op, d.data(), a.data(), b.data(), n);
      ++iters;
      c1 = cpu_seconds();
    }
    const double w1 = wall_seconds(), moved = double(bytes) * double(iters) / 1e9;
    if (moved / (c1 - c0) > best.cpu_gbps) best = {moved / (c1 - c0), moved / (w1 - w0)};
  }
  return best;
}

void row(eng::DType t, eng::RedOp op, size_t bytes) {
  const Rate r = measure(t, op, bytes);
  std::printf("%-9s %-5s %9zu KiB %8.2f %9.2f %9.2f\n", eng::dtype_name(t), eng::redop_name(op),
              bytes / 1024, r.cpu_gbps, 3 * r.cpu_gbps, r.wall_gbps);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const bool all = argc > 1 && std::string_view(argv[1]) == "--all";
  if (argc > 2 || (argc == 2 && !all)) {
    std::fprintf(stderr, "usage: %s [--all]\n", argv[0]);
    return 2;
  }
  std::printf("%-9s %-5s %13s %8s %9s %9s\n", "type", "op", "operand", "GB/s", "mem GB/s",
              "wall GB/s");
  if (all) {
    for (int ti = 0; ti < eng::kDTypeCount; ++ti)
      for (int o = 0; o < eng::kRedOpCount - 1; ++o)  // avg reduces as sum
        row(static_cast<eng::DType>(ti), static_cast<eng::RedOp>(o), size_t(1) << 20);
    return 0;
  }
  for (size_t bytes : {size_t(1) << 20, size_t(64) << 20})
    for (eng::DType t : {eng::DType::Fp32, eng::DType::Fp16, eng::DType::Bf16, eng::DType::Fp8E4M3,
                         eng::DType::Int64})
      row(t, eng::RedOp::Sum, bytes);
  return 0;
}
