// nccom-test's results: nccl-tests' bandwidth arithmetic, its table, and
// the --json document (schema in docs/tools/nccom-test.md). Pure formatting:
// tests give known numbers.
#pragma once

#include "options.h"

#include <cstdint>
#include <string>
#include <vector>

namespace nccom::nccomtest {

// One column group (out-of-place or in-place).
struct Timing {
  double time_us = 0;  // per iteration, the slowest rank's
  double algbw = 0;    // GB/s: size / time
  double busbw = 0;    // GB/s: algbw × busbw_factor
  int64_t wrong = -1;  // wrong elements over all ranks; -1 = not checked
  bool ran = true;     // false: the column does not apply (N/A, JSON null)
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

struct RunInfo {
  int ranks = 1;
  int hosts = 1;
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
};

// nccl-tests' bus bandwidth factors: all-reduce 2(n−1)/n; all-gather,
// reduce-scatter, all-to-all (n−1)/n; broadcast, reduce, send/recv 1.
double busbw_factor(Op op, int nranks);
// algbw and busbw of moving `bytes` in time_us (0 when the time is 0).
Timing make_timing(Op op, int nranks, uint64_t bytes, double time_us, int64_t wrong);

// The lines before an operation's rows, one row, and the lines after them.
std::string table_header(const RunInfo& info, Op op);
std::string table_row(const RunInfo& info, Op op, const Row& row);
std::string table_footer(const RunInfo& info, const OpResult& r);
// nccl-tests' "Avg bus bandwidth": the mean busbw over every row's
// out-of-place and in-place columns that ran (0 with none).
double avg_busbw(const OpResult& r);
// Wrong elements over every row and column (0 when not checked).
int64_t total_wrong(const std::vector<OpResult>& results);

// The whole --json document, newline-terminated.
std::string to_json(const RunInfo& info, const std::vector<OpResult>& results);

}  // namespace nccom::nccomtest
