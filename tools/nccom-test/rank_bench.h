// RankBench: one rank of nccom-test (run_rank, bench.h). Its members are
// defined in two files by what they do: rank_setup.cc joins the communicator
// and describes the run (configuration, net plugin, versions, placement,
// device buffers, the rank's end on a runtime failure); bench.cc runs the
// measured loop (timed and checked calls, combining across ranks, rank 0's
// report). Only those two files include it.
#pragma once

#include "launch_env.h"
#include "options.h"
#include "pattern.h"
#include "rank_end.h"
#include "report.h"

#include <nrt_emu.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nccom::nccomtest {

class RankBench {
 public:
  RankBench(const Options& o, const Placement& p);

  int run();

 private:
  // rank_setup.cc: joining the communicator and describing the run.
  RunInfo run_info() const;
  void resolve_config();
  void gather_placement();
  void init();
  static NetPluginInfo query_net_plugin();
  void check_net_selection() const;
  RuntimeReason init_reason() const;
  [[noreturn]] void fail_in(const std::string& doing) const;
  void alloc(size_t bytes, void** out, const char* what);

  // bench.cc: the measured loop.
  void print(const std::string& s);
  nrt_emu_coll_args_t args(Op op, const Layout& l, const void* send, void* recv) const;
  void call(const nrt_emu_coll_args_t& a, Op op, uint64_t bytes, const char* what);
  double timed(const nrt_emu_coll_args_t& a, Op op, uint64_t bytes, const char* what,
               IterStats* stats);
  void combine_iterations();
  std::string algorithm(const nrt_emu_coll_args_t& a);
  int64_t checked(Op op, const Layout& l, bool in_place, uint64_t bytes);
  Row row(Op op, uint64_t requested);
  void combine(const double t[2], RankTimes out[2], int64_t wrong[2]);
  void report(const RunInfo& info, const std::vector<OpResult>& results);

  const Options& o_;
  const Placement& p_;
  int slow_ms_ = 0;         // NCCOM_TEST_DEBUG_SLOW_RANK
  std::string slow_while_;  // NCCOM_TEST_DEBUG_SLOW_WHILE
  const size_t ts_;
  nrt_emu_ccom_t* c_ = nullptr;
  void* a_ = nullptr;
  void* b_ = nullptr;
  void* stats_ = nullptr;
  void* iter_buf_ = nullptr;     // --stats: kStatsChunk fp64 in device memory
  std::vector<double> iter_us_;  // --stats: one placement's per-iteration times
  NetPluginInfo net_plugin_;
  std::string started_utc_;
  std::vector<RankPlace> placement_;
  std::string config_file_, config_cluster_, config_digest_, config_error_;
  std::vector<std::pair<std::string, std::string>> launch_env_;
};

}  // namespace nccom::nccomtest
