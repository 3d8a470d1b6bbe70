// One rank of nccom-test, its measured loop: every operation at every size,
// timed, checked and combined across ranks, and rank 0's report (see bench.h,
// rank_bench.h and README.md).
#include "bench.h"

#include "pattern.h"
#include "plot_svg.h"
#include "rank_bench.h"
#include "rank_end.h"
#include "report.h"

#include <nrt_emu.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace nccom::nccomtest {
namespace {

namespace eng = nrt_emu::engine;
using Clock = std::chrono::steady_clock;

nrt_emu_coll_t coll_of(Op op) {
  switch (op) {
    case Op::AllReduce: return NRT_EMU_ALL_REDUCE;
    case Op::AllGather: return NRT_EMU_ALL_GATHER;
    case Op::ReduceScatter: return NRT_EMU_REDUCE_SCATTER;
    case Op::SendRecv: return NRT_EMU_PERMUTE;
    case Op::AllToAll: return NRT_EMU_ALL_TO_ALL;
    case Op::Broadcast: return NRT_EMU_BROADCAST;
    case Op::Reduce: return NRT_EMU_REDUCE;
  }
  return NRT_EMU_ALL_REDUCE;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// rank 0's progress line on stderr: kept on one terminal line when stderr
// is a terminal; otherwise a line every 5 s once the run passed 3 s.
class Progress {
 public:
  Progress(bool enabled, size_t total) : enabled_(enabled), total_(total) {
    const char* tty = std::getenv(kTtyVar);
    tty_ = (tty != nullptr && std::strcmp(tty, "1") == 0) || isatty(STDERR_FILENO) == 1;
  }
  void update(Op op, uint64_t bytes, size_t done) {
    if (!enabled_) return;
    const double s = std::chrono::duration<double>(Clock::now() - start_).count();
    if (tty_) {
      std::fprintf(stderr, "\r\033[Knccom-test: %s %llu B (%zu/%zu rows, %.1f s)", op_name(op),
                   static_cast<unsigned long long>(bytes), done, total_, s);
      shown_ = true;
    } else if (s > 3.0 && s - last_ >= 5.0) {
      std::fprintf(stderr, "nccom-test: progress: %s %llu B (%zu/%zu rows, %.1f s)\n", op_name(op),
                   static_cast<unsigned long long>(bytes), done, total_, s);
      last_ = s;
    }
    std::fflush(stderr);
  }
  void finish() {
    if (!shown_) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    shown_ = false;
  }

 private:
  bool enabled_, tty_ = false, shown_ = false;
  size_t total_;
  double last_ = -1e9;
  Clock::time_point start_ = Clock::now();
};

}  // namespace

RankBench::RankBench(const Options& o, const Placement& p)
    : o_(o), p_(p), ts_(eng::dtype_size(o.dtype)) {}

int RankBench::run() {
  started_utc_ = utc_now();
  init();
  // Test seam (docs/tools/nccom-test.md): this rank dies as its peers enter the first
  // collective — after a barrier, so that every rank has finished joining
  // (and mapping its peers' memory) first.
  if (const char* k = std::getenv("NCCOM_TEST_DEBUG_KILL_RANK"); k != nullptr && *k) {
    if (nrt_emu_ccom_barrier(c_) != NRT_SUCCESS) fail_in("the barrier before the test kill");
    if (std::atoi(k) == p_.rank) raise(SIGKILL);
  }
  // Test seam: NCCOM_TEST_DEBUG_SLOW_RANK=R:MS makes rank R wait MS ms
  // before each collective call (a rank that is slow, not stuck).
  if (const char* k = std::getenv("NCCOM_TEST_DEBUG_SLOW_RANK"); k != nullptr && *k) {
    int rank = -1;
    int ms = 0;
    if (std::sscanf(k, "%d:%d", &rank, &ms) != 2 || ms < 0 || ms > 600000)
      die(p_, std::string("NCCOM_TEST_DEBUG_SLOW_RANK=\"") + k + "\" is not RANK:MS");
    if (rank == p_.rank) slow_ms_ = ms;
    // NCCOM_TEST_DEBUG_SLOW_WHILE=PATH: only while PATH exists, so a test
    // decides when the slow phase ends instead of racing a fixed length.
    if (const char* w = std::getenv("NCCOM_TEST_DEBUG_SLOW_WHILE"); w != nullptr && *w)
      slow_while_ = w;
  }
  std::vector<OpResult> results;
  const std::vector<uint64_t> sizes = size_series(o_);
  Progress progress(p_.rank == 0, sizes.size() * o_.ops.size());
  // Every rank finds its job's nccom-ras port now, while every process
  // answers: a rank that fails later then asks only for the findings,
  // while its peers may be failing and exiting too.
  (void)own_health_port();
  const RunInfo info = run_info();
  if (p_.rank == 0 && !o_.json) print(run_header(info));
  size_t done = 0;
  for (Op op : o_.ops) {
    if (p_.rank == 0 && !o_.json) print(table_header(info, op));
    OpResult r{op, {}};
    for (uint64_t bytes : sizes) {
      progress.update(op, bytes, done++);
      r.rows.push_back(row(op, bytes));
      progress.finish();  // a terminal's progress line gives way to the row
      if (p_.rank == 0 && !o_.json) print(table_row(info, op, r.rows.back()));
    }
    if (p_.rank == 0 && !o_.json) print(table_footer(info, r));
    if (p_.rank == 0 && !o_.json && o_.stats) print(stats_table(info, r));
    results.push_back(std::move(r));
  }
  // The placement is gathered after the measured operations, so that the
  // first collective of a run is the first one measured (a net that fails
  // or stalls fails that one, and the rings are built before the mesh, as
  // in a job); the block follows the last table.
  gather_placement();
  RunInfo placed = info;
  placed.placement = placement_;
  if (p_.rank == 0 && !o_.json) print(placement_block(placed.placement));
  const int64_t wrong = total_wrong(results);
  if (p_.rank == 0) report(placed, results);
  nrt_emu_ccom_free(c_, a_);
  nrt_emu_ccom_free(c_, b_);
  nrt_emu_ccom_free(c_, stats_);
  if (iter_buf_ != nullptr) nrt_emu_ccom_free(c_, iter_buf_);
  nrt_emu_ccom_close(c_);
  if (wrong > 0) return p_.launcher == Launcher::LocalChild ? kExitCheckFailed : 1;
  return 0;
}

void RankBench::print(const std::string& s) {
  std::fputs(s.c_str(), stdout);
  std::fflush(stdout);
}

nrt_emu_coll_args_t RankBench::args(Op op, const Layout& l, const void* send, void* recv) const {
  nrt_emu_coll_args_t a{};
  a.coll = coll_of(op);
  a.dtype = static_cast<int32_t>(o_.dtype);
  a.op = static_cast<int32_t>(o_.redop);
  a.count = l.count;
  a.send = send;
  a.recv = recv;
  a.root = o_.root;
  a.send_to = (p_.rank + 1) % p_.size;
  a.recv_from = (p_.rank + p_.size - 1) % p_.size;
  return a;
}

void RankBench::call(const nrt_emu_coll_args_t& a, Op op, uint64_t bytes, const char* what) {
  if (slow_ms_ > 0 && (slow_while_.empty() || ::access(slow_while_.c_str(), F_OK) == 0))
    std::this_thread::sleep_for(std::chrono::milliseconds(slow_ms_));
  if (nrt_emu_ccom_run(c_, &a) != NRT_SUCCESS)
    fail_in(std::string(op_name(op)) + " of " + std::to_string(bytes) + " B (" + what + ")");
}

// Mean time of one call over the timed iterations, in microseconds. With
// --stats each iteration is measured on its own too (iter_us_), and
// combined across ranks (MAX) into *stats.
double RankBench::timed(const nrt_emu_coll_args_t& a, Op op, uint64_t bytes, const char* what,
                        IterStats* stats) {
  for (int i = 0; i < o_.warmup; ++i) call(a, op, bytes, what);
  if (nrt_emu_ccom_barrier(c_) != NRT_SUCCESS) fail_in("the barrier before the timed iterations");
  iter_us_.clear();
  const auto t0 = Clock::now();
  auto last = t0;
  for (int i = 0; i < o_.iters; ++i) {
    call(a, op, bytes, what);
    if (!o_.stats) continue;
    const auto now = Clock::now();
    iter_us_.push_back(std::chrono::duration<double, std::micro>(now - last).count());
    last = now;
  }
  const double mean =
      std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / o_.iters;
  if (o_.stats) {
    combine_iterations();
    *stats = iter_stats(iter_us_);
  }
  return mean;
}

// Each iteration's slowest rank: an all-reduce MAX of iter_us_ through
// the device, kStatsChunk values at a time.
void RankBench::combine_iterations() {
  auto* d = static_cast<double*>(iter_buf_);
  for (size_t at = 0; at < iter_us_.size(); at += kStatsChunk) {
    const size_t n = std::min<size_t>(kStatsChunk, iter_us_.size() - at);
    std::copy_n(iter_us_.begin() + static_cast<std::ptrdiff_t>(at), n, d);
    nrt_emu_coll_args_t a{};
    a.coll = NRT_EMU_ALL_REDUCE;
    a.dtype = NRT_EMU_FP64;
    a.op = NRT_EMU_MAX;
    a.count = n;
    a.send = a.recv = iter_buf_;
    if (nrt_emu_ccom_run(c_, &a) != NRT_SUCCESS) fail_in("combining the per-iteration times");
    std::copy_n(d, n, iter_us_.begin() + static_cast<std::ptrdiff_t>(at));
  }
}

// The engine's algorithm for a call (nrt_emu_ccom_algorithm).
std::string RankBench::algorithm(const nrt_emu_coll_args_t& a) {
  const char* name = nullptr;
  if (nrt_emu_ccom_algorithm(c_, &a, &name) != NRT_SUCCESS || name == nullptr)
    fail_in("asking the engine for its algorithm");
  return name;
}

// Fresh input, a poisoned output (so a call that writes nothing cannot
// pass on an earlier iteration's result), one call, the comparison.
int64_t RankBench::checked(Op op, const Layout& l, bool in_place, uint64_t bytes) {
  auto* a = static_cast<unsigned char*>(a_);
  auto* b = static_cast<unsigned char*>(b_);
  std::memset(b, 0xA5, inplace_elems(op, l) * ts_);
  unsigned char* in = in_place ? b + inplace_send_offset(op, l, p_.rank) * ts_ : a;
  const size_t in_elems = in_place && op == Op::AllGather ? l.count : l.send_elems;
  fill_input(op, o_.dtype, o_.redop, p_.rank, p_.size, in, in_elems);
  unsigned char* out = in_place ? b + inplace_recv_offset(op, l, p_.rank) * ts_ : b;
  call(args(op, l, in, out), op, bytes, in_place ? "in-place check" : "out-of-place check");
  const std::vector<unsigned char> want =
      expected_output(op, o_.dtype, o_.redop, p_.rank, p_.size, o_.root, l);
  return static_cast<int64_t>(
      count_wrong(op, o_.dtype, o_.redop, out, want.data(), want.size() / ts_));
}

Row RankBench::row(Op op, uint64_t requested) {
  const Layout l = layout_for(op, requested, ts_, p_.size);
  auto* a = static_cast<unsigned char*>(a_);
  auto* b = static_cast<unsigned char*>(b_);
  double t[2];
  int64_t wrong[2] = {-1, -1};
  IterStats stats[2];
  std::string algo[2];
  // Out of place: send from a, receive into b.
  fill_input(op, o_.dtype, o_.redop, p_.rank, p_.size, a, l.send_elems);
  const nrt_emu_coll_args_t out_of_place = args(op, l, a, b);
  algo[0] = algorithm(out_of_place);
  t[0] = timed(out_of_place, op, l.bytes, "out-of-place", &stats[0]);
  if (o_.check) wrong[0] = checked(op, l, false, l.bytes);
  // In place: one buffer, nccl-tests' offsets (where NCCL defines it).
  t[1] = 0;
  if (op_has_in_place(op)) {
    unsigned char* in = b + inplace_send_offset(op, l, p_.rank) * ts_;
    fill_input(op, o_.dtype, o_.redop, p_.rank, p_.size, in,
               op == Op::AllGather ? l.count : l.send_elems);
    const nrt_emu_coll_args_t in_place =
        args(op, l, in, b + inplace_recv_offset(op, l, p_.rank) * ts_);
    algo[1] = algorithm(in_place);
    t[1] = timed(in_place, op, l.bytes, "in-place", &stats[1]);
    if (o_.check) wrong[1] = checked(op, l, true, l.bytes);
  }
  RankTimes times[2];
  combine(t, times, wrong);
  Row r;
  r.bytes = l.bytes;
  r.count = l.elems;
  r.out_of_place = make_timing(op, p_.size, l.bytes, times[0], o_.average, wrong[0]);
  r.in_place = make_timing(op, p_.size, l.bytes, times[1], o_.average, wrong[1]);
  r.in_place.ran = op_has_in_place(op);
  for (int k = 0; k < 2; ++k) {
    Timing& tk = k == 0 ? r.out_of_place : r.in_place;
    tk.algorithm = algo[k];
    tk.stats = stats[k];
  }
  return r;
}

// Every rank's times (minimum, mean, maximum; rank 0's own on rank 0)
// and wrong counts, through the engine (fp64 all-reduces in place in
// device memory): no side channel. MAX over the times and their
// negatives gives the maximum and the minimum in one call; SUM over the
// times and the wrong counts (whole numbers far below 2^53: exact) the
// mean and the total.
void RankBench::combine(const double t[2], RankTimes out[2], int64_t wrong[2]) {
  auto* d = static_cast<double*>(stats_);
  auto reduce = [&](int32_t op, const char* what) {
    nrt_emu_coll_args_t a{};
    a.coll = NRT_EMU_ALL_REDUCE;
    a.dtype = NRT_EMU_FP64;
    a.op = op;
    a.count = 4;
    a.send = a.recv = stats_;
    if (nrt_emu_ccom_run(c_, &a) != NRT_SUCCESS) fail_in(std::string("combining ") + what);
  };
  d[0] = t[0];
  d[1] = t[1];
  d[2] = -t[0];
  d[3] = -t[1];
  reduce(NRT_EMU_MAX, "the times (max and min)");
  for (int k = 0; k < 2; ++k) {
    out[k].rank0 = t[k];
    out[k].max = d[k];
    out[k].min = -d[2 + k];
  }
  d[0] = t[0];
  d[1] = t[1];
  d[2] = static_cast<double>(wrong[0]);
  d[3] = static_cast<double>(wrong[1]);
  reduce(NRT_EMU_SUM, "the times (sum) and wrong counts");
  for (int k = 0; k < 2; ++k) {
    out[k].avg = d[k] / p_.size;
    if (o_.check) wrong[k] = std::llround(d[2 + k]);
  }
}

void RankBench::report(const RunInfo& info, const std::vector<OpResult>& results) {
  if (o_.json) print(to_json(info, results));
  if (o_.plot.empty()) return;
  std::vector<PlotSeries> series;
  for (const OpResult& r : results) series.push_back({op_name(r.op), r.rows});
  const std::string title = "nccom-test: " + std::to_string(p_.size) + " ranks on " +
                            std::to_string(p_.hosts) + " host(s), " + eng::dtype_name(o_.dtype) +
                            ", net " + net_name(o_.net);
  std::ofstream f(o_.plot, std::ios::binary | std::ios::trunc);
  f << render_svg(title, series);
  f.close();
  if (!f) die(p_, "writing the plot " + o_.plot + " failed");
}

uint64_t combining_calls_per_row(const Options& o) {
  const uint64_t per_placement =
      o.stats ? (static_cast<uint64_t>(o.iters) + kStatsChunk - 1) / kStatsChunk : 0;
  return 2 + 2 * per_placement;
}

int run_rank(const Options& o, const Placement& p) { return RankBench(o, p).run(); }

std::string check_plot_path(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  if (access(dir.c_str(), W_OK) != 0) {
    return "--plot " + path + ": the directory " + dir + " does not exist or is not writable";
  }
  return "";
}

}  // namespace nccom::nccomtest
