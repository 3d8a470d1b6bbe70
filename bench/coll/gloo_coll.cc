// nccom_bench_gloo_coll — Gloo's side of the collective benchmark
// (bench/coll/README.md): gloo::allreduce (fp32 sum, Gloo's default ring
// algorithm) and gloo::allgather (fp32) over Gloo's TCP transport on
// 127.0.0.1, timed exactly as mpi_coll.c times MPI.
//
// One process per rank, started by bench/coll/run.sh; the ranks meet through
// a gloo::rendezvous::FileStore in a directory they share:
//
//   nccom_bench_gloo_coll --rank R --size N --store DIR -b 8 -e 64M allr allg
//
// Per size: the check pattern as input, `warmup` untimed calls, a barrier,
// `iters` calls between two steady_clock stamps; the row's time is the mean
// per call of the slowest rank (a max all-reduce over ranks). One more call
// on fresh input is then checked (not timed). The option objects are built
// once per size, outside the timed loop, as a user holding its buffers would.
#include "coll_common.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

#include <chrono>
#include <cstring>
#include <exception>
#include <memory>
#include <vector>

namespace {

using Context = std::shared_ptr<gloo::Context>;
using ReduceFn = void (*)(void*, const void*, const void*, size_t);

// Every wait in a collective is bounded by this; the script bounds the run.
constexpr std::chrono::seconds kTimeout{300};

// A small all-reduce used to combine the per-rank results (not timed).
template <typename T>
T allreduce_one(const Context& ctx, T value, ReduceFn fn) {
  T out = value;
  gloo::AllreduceOptions opts(ctx);
  opts.setOutput(&out, 1);
  opts.setReduceFunction(fn);
  opts.setTag(1);
  gloo::allreduce(opts);
  return out;
}

// Untimed small all-reduces until rank 0 has seen COLL_SETTLE_SECONDS pass.
void settle(const Context& ctx) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::chrono::duration<double> settle_time(COLL_SETTLE_SECONDS);
  int stop = 0;
  while (!stop) {
    const int mine = ctx->rank == 0 && std::chrono::steady_clock::now() - t0 >= settle_time;
    stop = allreduce_one<int>(ctx, mine, static_cast<ReduceFn>(&gloo::max<int>));
  }
}

// One size of one operation: the options bound to the buffers, and the call.
class Collective {
 public:
  Collective(const Context& ctx, coll_op op, float* send, float* recv, uint64_t count)
      : op_(op), allreduce_(ctx), allgather_(ctx) {
    if (op == COLL_ALLREDUCE) {
      allreduce_.setInput(send, count);
      allreduce_.setOutput(recv, count);
      allreduce_.setReduceFunction(static_cast<ReduceFn>(&gloo::sum<float>));
    } else {
      allgather_.setInput(send, count);
      allgather_.setOutput(recv, count * static_cast<uint64_t>(ctx->size));
    }
  }
  void run() {
    if (op_ == COLL_ALLREDUCE) {
      gloo::allreduce(allreduce_);
    } else {
      gloo::allgather(allgather_);
    }
  }

 private:
  coll_op op_;
  gloo::AllreduceOptions allreduce_;
  gloo::AllgatherOptions allgather_;
};

void fill_input(coll_op op, std::vector<float>& send, uint64_t count, int rank) {
  for (uint64_t i = 0; i < count; ++i) send[i] = coll_input(op, rank, i);
}

// Times and checks one size; rank 0 prints the row. Returns the wrong count.
uint64_t run_size(const Context& ctx, coll_op op, std::vector<float>& send,
                  std::vector<float>& recv, uint64_t bytes, const coll_options& o) {
  const int rank = ctx->rank, nranks = ctx->size;
  const uint64_t count = coll_count(op, bytes, nranks);
  if (count == 0) {
    // Too small for one element per rank: Gloo's all-gather divides by the
    // element count (SIGFPE), so nothing runs; the row shows time 0.
    if (rank == 0) coll_print_row(op, nranks, 0, 0.0, 0);
    return 0;
  }
  fill_input(op, send, count, rank);
  Collective call(ctx, op, send.data(), recv.data(), count);
  for (int i = 0; i < o.warmup; ++i) call.run();
  gloo::BarrierOptions barrier(ctx);
  gloo::barrier(barrier);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < o.iters; ++i) call.run();
  const std::chrono::duration<double, std::micro> elapsed = std::chrono::steady_clock::now() - t0;
  const double slowest_us = allreduce_one<double>(ctx, elapsed.count() / o.iters,
                                                  static_cast<ReduceFn>(&gloo::max<double>));

  // The check: the output poisoned first, so a call that writes nothing fails.
  const uint64_t out_count = op == COLL_ALLREDUCE ? count : count * static_cast<uint64_t>(nranks);
  std::memset(recv.data(), 0xA5, out_count * sizeof(float));
  fill_input(op, send, count, rank);
  call.run();
  const uint64_t wrong =
      allreduce_one<uint64_t>(ctx, coll_count_wrong(op, recv.data(), count, nranks),
                              static_cast<ReduceFn>(&gloo::sum<uint64_t>));
  if (rank == 0) coll_print_row(op, nranks, count, slowest_us, wrong);
  return wrong;
}

Context connect(const coll_options& o) {
  gloo::transport::tcp::attr attr;
  attr.hostname = "127.0.0.1";  // everything on loopback, as nccom's emulated hosts
  auto device = gloo::transport::tcp::CreateDevice(attr);
  gloo::rendezvous::FileStore store(o.store);
  auto ctx = std::make_shared<gloo::rendezvous::Context>(o.rank, o.size);
  ctx->setTimeout(kTimeout);
  ctx->connectFullMesh(store, device);
  return ctx;
}

int run(const coll_options& o) {
  const Context ctx = connect(o);
  // Both buffers hold the largest size: all-reduce needs size in and out,
  // all-gather size / n in and size out (+1 so an empty vector still has data()).
  std::vector<float> send(o.max_bytes / sizeof(float) + 1), recv(o.max_bytes / sizeof(float) + 1);
  settle(ctx);
  uint64_t wrong = 0;
  for (int k = 0; k < COLL_NUM_OPS; ++k) {
    if (!o.ops[k]) continue;
    const auto op = static_cast<coll_op>(k);
    if (o.rank == 0) coll_print_header("gloo_coll", op, o.size, &o);
    for (uint64_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= o.factor) {
      wrong += run_size(ctx, op, send, recv, bytes, o);
    }
  }
  if (o.rank == 0) {
    std::printf("# Wrong elements : %llu %s\n", static_cast<unsigned long long>(wrong),
                wrong == 0 ? "OK" : "FAILED");
  }
  gloo::BarrierOptions last(ctx);
  gloo::barrier(last);  // no rank closes its pairs while a peer still reads
  return wrong == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  coll_options o;
  if (!coll_parse_options(argc, argv, 1, &o)) return 2;
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gloo_coll rank %d: %s\n", o.rank, e.what());
    return 1;
  }
}
