// nccom-test's command line: the option names of Neuron's nccom-test and
// nccl-tests, parsed without touching the process (tests feed argument
// vectors), and the message-size series they describe.
#pragma once

#include "dtype.h"

#include <nccom/util/result.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nccom::nccomtest {

using nrt_emu::engine::DType;
using nrt_emu::engine::RedOp;

// The collectives, in the order nccom-test lists them.
enum class Op { AllReduce, AllGather, ReduceScatter, SendRecv, AllToAll, Broadcast, Reduce };

// "allr", "allg", "redsct", "sendrecv", "alltoall", "bcast", "reduce".
const char* op_name(Op op);
// Accepts op_name() spellings and the long ones (all_reduce, allreduce,
// all_gather, allgather, reduce_scatter, reducescatter, all_to_all,
// broadcast); case-insensitive.
bool parse_op(std::string_view s, Op* out);
// Why an operation Neuron's nccom-test knows is refused here (alltoallv,
// allgv, permute, case-insensitive): what it is and what to run instead;
// "" for any other name.
std::string refused_op(std::string_view s);
// Whether the operation reduces (has a meaningful redop column).
bool op_reduces(Op op);
// Whether the operation has a root (bcast, reduce).
bool op_has_root(Op op);
// Whether NCCL defines an in-place form: not for send/recv and all-to-all
// (the engine refuses their overlapping buffers), whose in-place columns
// are N/A.
bool op_has_in_place(Op op);

enum class Net { Default, Socket, Ofi };
const char* net_name(Net n);  // "default", "socket", "ofi"

// What the time column shows (nccl-tests' -a / --average): rank 0's own
// time, the mean over the ranks, the fastest or the slowest rank's.
enum class TimeOf { Rank0 = 0, Avg = 1, Min = 2, Max = 3 };
const char* time_of_name(TimeOf t);  // "rank0", "avg", "min", "max"

struct Options {
  std::vector<Op> ops;  // positional; at least one
  int ranks = 2;        // -r / --nworkers; under a launcher 0 = what the launcher started
  bool ranks_given = false;
  int nodes = 1;  // -N / --nnodes emulated hosts
  bool nodes_given = false;
  uint64_t min_bytes = 8;        // -b
  uint64_t max_bytes = 1 << 20;  // -e
  uint64_t step_factor = 2;      // -f (geometric series) ...
  uint64_t step_bytes = 0;       // -i (arithmetic series); 0 = use step_factor
  int iters = 20;                // -n
  int warmup = 5;                // -w
  DType dtype = DType::Fp32;     // -d
  RedOp redop = RedOp::Sum;      // -o
  int root = 0;                  // --root
  bool check = false;            // -c / --check
  bool json = false;             // --json
  TimeOf average = TimeOf::Max;  // -a / --average 0..3
  bool stats = false;            // --stats: per-iteration percentiles
  bool show_algorithm = false;   // --show-algorithm: an algo column per placement
  std::string plot;              // --plot FILE.svg ("" = none)
  Net net = Net::Default;        // --net
  uint32_t timeout_ms = 60000;   // --timeout-ms: bound of every wait in a collective
  bool help = false;             // -h / --help
};

// Parses argv[1..] (args excludes the program name). An error's message is
// one line naming the option and the rule; the caller prints it and exits 2.
Result<Options> parse_options(const std::vector<std::string>& args);

// "8", "64K", "1M", "2G" (binary multiples; an optional trailing B/b and
// KiB spellings accepted). nullopt-like error on anything else or overflow.
Result<uint64_t> parse_bytes(std::string_view text);

// The message sizes of the run: min, then ×factor (or +step) while ≤ max.
std::vector<uint64_t> size_series(const Options& o);

// The usage text of -h.
const char* usage_text();

// Bounds (checked by parse_options; documented in docs/tools/nccom-test.md).
inline constexpr int kMaxLocalRanks = 256;
inline constexpr int kMaxRanksPerHost = 16;  // the emu's NEURON_RT_EMU_DEVICES range
inline constexpr uint64_t kMaxBytes = 4ull << 30;
inline constexpr size_t kMaxSizes = 1000;
inline constexpr int kMaxIters = 1000000;

}  // namespace nccom::nccomtest
