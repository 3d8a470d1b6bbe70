// nccom-test's results: nccl-tests' bandwidth arithmetic, its table, and
// the --json document (schema in docs/tools/nccom-test.md). Pure formatting:
// tests give known numbers.
#pragma once

#include "options.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nccom::nccomtest {

// --stats: one placement's timed iterations, each measured on its own and
// combined across ranks with MAX (the iteration's slowest rank), then
// summarised over the iterations (nearest-rank percentiles).
struct IterStats {
  int iters = 0;  // 0: not measured (no --stats)
  double min_us = 0, p50_us = 0, p90_us = 0, p99_us = 0, max_us = 0;
};
// The summary of `values` (sorted in place); iters = 0 when empty.
IterStats iter_stats(std::vector<double>& values);

// One placement's mean time per iteration, seen from every rank: rank 0's
// own, and the minimum, mean and maximum over the ranks.
struct RankTimes {
  double rank0 = 0, min = 0, avg = 0, max = 0;
};
// The one of them -a chose.
double chosen_time(const RankTimes& t, TimeOf of);

// One column group (out-of-place or in-place).
struct Timing {
  double time_us = 0;  // per iteration, as -a chose (default the slowest rank's)
  double time_min_us = 0, time_avg_us = 0, time_max_us = 0;  // over the ranks
  double algbw = 0;                                          // GB/s: size / time
  double busbw = 0;                                          // GB/s: algbw × busbw_factor
  int64_t wrong = -1;     // wrong elements over all ranks; -1 = not checked
  bool ran = true;        // false: the column does not apply (N/A, JSON null)
  std::string algorithm;  // the engine's (nrt_emu_ccom_algorithm); "" = unknown
  IterStats stats;        // --stats
};

struct Row {
  uint64_t bytes = 0;  // size(B)
  uint64_t count = 0;  // count(elems)
  Timing out_of_place;
  Timing in_place;
};

struct OpResult {
  Op op = Op::AllReduce;
  std::vector<Row> rows;
};

// What the run was (the header and the JSON's top level).
// The net plugin libnccom selected, as the runtime reports it
// (nrt_emu_net_plugin); known == false when the query failed.
struct NetPluginInfo {
  bool known = false;
  std::string name;           // the plugin's table name
  std::string layout;         // "Neuron" / "NVIDIA"
  int version = 0;            // 4, 5, 6
  std::string file;           // the file holding its table
  bool adapted = false;       // served through libnccom's v6 adapter
  bool from_runtime = false;  // the runtime's libnccom-net.so
  std::string error;          // why it is not known
};
// "AWS Libfabric (Neuron ncclNet_v6) from /x/libnccom-net.so, the runtime's plugin".
std::string describe(const NetPluginInfo& p);

// One rank's place, gathered from every rank through the engine.
struct RankPlace {
  int rank = 0;
  int pid = 0;
  std::string hostname;  // the machine's host name
  int host = 0;          // emulated host id
  int device = 0;        // local device on that host
  std::string config_digest;
};

// "version (git hash)" of each part; "" = unknown.
struct Versions {
  std::string tool, tool_git;        // nccom-test's build
  std::string nccom, nccom_git;      // libnccom's (neuronGetVersionInfo)
  std::string runtime, runtime_git;  // the runtime's (nrt_get_version)
};

struct RunInfo {
  int ranks = 1;
  int hosts = 1;         // emulated hosts (or machines, under a launcher across machines)
  std::string launcher;  // launcher_name()
  Net net = Net::Default;
  NetPluginInfo net_plugin;
  DType dtype = DType::Fp32;
  RedOp redop = RedOp::Sum;
  int root = 0;
  int iters = 0;
  int warmup = 0;
  bool check = false;
  uint32_t timeout_ms = 0;
  std::string health_address;  // where nccom-ras reaches the job ("" when unknown)
  std::string health_note;     // why it is unknown ("" when nothing to say)
  TimeOf average = TimeOf::Max;
  bool stats = false;
  bool show_algorithm = false;
  std::string platform;  // NEURON_RT_EMU_PLATFORM as resolved; "" = unknown
  Versions versions;
  std::string started_utc;           // ISO 8601, rank 0's clock
  std::vector<RankPlace> placement;  // by rank
  // The configuration rank 0 resolved (config::load, after nccom-test set
  // the ranks' environment), and the variables nccom-test sets for its
  // ranks as rank 0 had them (name, value; unset ones left out).
  std::string config_file, config_cluster, config_digest, config_error;
  std::vector<std::pair<std::string, std::string>> launch_env;
};

// The net plugin really used: "socket" (nccom's socket plugin), "ofi" (the
// runtime's libnccom-net.so), another plugin's table name, or "unknown".
std::string net_used(const NetPluginInfo& p);
// The machines' host names, each once, in rank order.
std::vector<std::string> job_hostnames(const RunInfo& info);

// nccl-tests' bus bandwidth factors: all-reduce 2(n−1)/n; all-gather,
// reduce-scatter, all-to-all (n−1)/n; broadcast, reduce, send/recv 1.
double busbw_factor(Op op, int nranks);
// algbw and busbw of moving `bytes` in time_us (0 when the time is 0).
Timing make_timing(Op op, int nranks, uint64_t bytes, double time_us, int64_t wrong);

// An operation's placement with the mean time combined from RankTimes
// (time_us as `of` says).
Timing make_timing(Op op, int nranks, uint64_t bytes, const RankTimes& t, TimeOf of, int64_t wrong);

// The lines before the first table (text mode): versions and platform, the
// configuration, and the placement block when info.placement is known.
std::string run_header(const RunInfo& info);
// One line per rank ("#  Rank  0 Pid 4242 on host-a emulated host 0 device
// 0") and a closing "#"; "" for none. nccom-test prints it after the last
// table: the placement is gathered once the measured operations have run.
std::string placement_block(const std::vector<RankPlace>& placement);
// The lines before an operation's rows, one row, and the lines after them.
std::string table_header(const RunInfo& info, Op op);
std::string table_row(const RunInfo& info, Op op, const Row& row);
std::string table_footer(const RunInfo& info, const OpResult& r);
// Where the engine's algorithm changed over the sizes, from the
// out-of-place columns: "ring", "rd up to 32768 B, ring above", "unknown".
std::string algorithm_summary(const OpResult& r);
// --stats: the per-iteration table printed after an operation's table
// (every line starts with '#', so column parsers of the main table skip it).
std::string stats_table(const RunInfo& info, const OpResult& r);
// nccl-tests' "Avg bus bandwidth": the mean busbw over every row's
// out-of-place and in-place columns that ran (0 with none).
double avg_busbw(const OpResult& r);
// Wrong elements over every row and column (0 when not checked).
int64_t total_wrong(const std::vector<OpResult>& results);

// The whole --json document, newline-terminated.
std::string to_json(const RunInfo& info, const std::vector<OpResult>& results);

}  // namespace nccom::nccomtest
