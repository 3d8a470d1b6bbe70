// Command-line parsing for nccom-test (see options.h and docs/tools/nccom-test.md).
#include "options.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>

namespace nccom::nccomtest {
namespace {

Error usage_error(std::string msg) { return make_error(NRT_INVALID, std::move(msg)); }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A decimal integer in [lo, hi]; the error names the option.
Result<long long> parse_int(const std::string& opt, const std::string& v, long long lo,
                            long long hi) {
  if (v.empty() || !(std::isdigit(static_cast<unsigned char>(v[0])) || v[0] == '-')) {
    return usage_error(opt + " needs an integer, got '" + v + "'");
  }
  char* end = nullptr;
  errno = 0;
  const long long n = std::strtoll(v.c_str(), &end, 10);
  if (*end != '\0' || errno != 0) return usage_error(opt + " needs an integer, got '" + v + "'");
  if (n < lo || n > hi) {
    return usage_error(opt + " must be in " + std::to_string(lo) + ".." + std::to_string(hi) +
                       ", got " + v);
  }
  return n;
}

// Options that take a value, by every spelling.
enum class Key {
  Ranks,
  Nodes,
  MinBytes,
  MaxBytes,
  StepFactor,
  StepBytes,
  Iters,
  Warmup,
  DataType,
  RedOp,
  Root,
  Plot,
  Net,
  Timeout,
  Average
};
struct Spelling {
  const char* name;
  Key key;
};
constexpr Spelling kValued[] = {
    {"-r", Key::Ranks},         {"--ranks", Key::Ranks},
    {"-N", Key::Nodes},         {"--nodes", Key::Nodes},
    {"-b", Key::MinBytes},      {"--minbytes", Key::MinBytes},
    {"-e", Key::MaxBytes},      {"--maxbytes", Key::MaxBytes},
    {"-f", Key::StepFactor},    {"--stepfactor", Key::StepFactor},
    {"-i", Key::StepBytes},     {"--stepbytes", Key::StepBytes},
    {"-n", Key::Iters},         {"--iters", Key::Iters},
    {"-w", Key::Warmup},        {"--warmup_iters", Key::Warmup},
    {"-d", Key::DataType},      {"--datatype", Key::DataType},
    {"-o", Key::RedOp},         {"--op", Key::RedOp},
    {"--root", Key::Root},      {"--plot", Key::Plot},
    {"--net", Key::Net},        {"--timeout-ms", Key::Timeout},
    {"-a", Key::Average},       {"--average", Key::Average},
    {"--nworkers", Key::Ranks}, {"--nnodes", Key::Nodes},  // Neuron nccom-test's spellings
};

const Spelling* find_valued(std::string_view name) {
  for (const Spelling& s : kValued) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

// One valued option into `o`: a flat switch, one short case per option.
// NOLINTNEXTLINE(readability-function-size): splitting it would scatter the options' table
Status apply(Key key, const std::string& opt, const std::string& v, Options& o,
             bool& factor_given) {
  switch (key) {
    case Key::Ranks: {
      auto n = parse_int(opt, v, 1, kMaxLocalRanks * 64);
      if (!n) return n.take_error();
      o.ranks = static_cast<int>(*n);
      o.ranks_given = true;
      return {};
    }
    case Key::Nodes: {
      auto n = parse_int(opt, v, 1, kMaxLocalRanks * 64);
      if (!n) return n.take_error();
      o.nodes = static_cast<int>(*n);
      o.nodes_given = true;
      return {};
    }
    case Key::MinBytes:
    case Key::MaxBytes:
    case Key::StepBytes: {
      auto b = parse_bytes(v);
      if (!b) return usage_error(opt + ": " + b.error().message);
      if (*b > kMaxBytes) return usage_error(opt + " must be at most 4G, got " + v);
      if (key == Key::MinBytes) o.min_bytes = *b;
      if (key == Key::MaxBytes) o.max_bytes = *b;
      if (key == Key::StepBytes) {
        if (*b == 0) return usage_error(opt + " must be at least 1 byte");
        o.step_bytes = *b;
      }
      return {};
    }
    case Key::StepFactor: {
      auto n = parse_int(opt, v, 2, 1024);
      if (!n) return usage_error(n.error().message + " (-f multiplies; use -i for additive steps)");
      o.step_factor = static_cast<uint64_t>(*n);
      factor_given = true;
      return {};
    }
    case Key::Iters:
    case Key::Warmup: {
      auto n = parse_int(opt, v, key == Key::Iters ? 1 : 0, kMaxIters);
      if (!n) return n.take_error();
      (key == Key::Iters ? o.iters : o.warmup) = static_cast<int>(*n);
      return {};
    }
    case Key::DataType: {
      auto t = nrt_emu::engine::parse_dtype(v);
      if (!t) {
        return usage_error(
            opt + ": unknown data type '" + v +
            "' (int8 uint8 int16 uint16 int32 uint32 int64 uint64 fp16 bf16 fp32 fp64 "
            "fp8_e4m3 fp8_e5m2)");
      }
      o.dtype = *t;
      return {};
    }
    case Key::RedOp: {
      auto r = nrt_emu::engine::parse_redop(v);
      if (!r) return usage_error(opt + ": unknown reduction '" + v + "' (sum prod min max avg)");
      o.redop = *r;
      return {};
    }
    case Key::Root: {
      auto n = parse_int(opt, v, 0, kMaxLocalRanks * 64 - 1);
      if (!n) return n.take_error();
      o.root = static_cast<int>(*n);
      return {};
    }
    case Key::Plot:
      if (v.empty()) return usage_error(opt + " needs a file name");
      o.plot = v;
      return {};
    case Key::Net: {
      const std::string n = lower(v);
      if (n == "socket") {
        o.net = Net::Socket;
      } else if (n == "ofi") {
        o.net = Net::Ofi;
      } else {
        return usage_error(opt + " must be socket or ofi, got '" + v + "'");
      }
      return {};
    }
    case Key::Average: {
      auto n = parse_int(opt, v, 0, 3);
      if (!n) {
        return usage_error(n.error().message +
                           " (0 = rank 0's time, 1 = the mean over ranks, 2 = the fastest "
                           "rank's, 3 = the slowest rank's)");
      }
      o.average = static_cast<TimeOf>(*n);
      return {};
    }
    case Key::Timeout: {
      auto n = parse_int(opt, v, 1, 3600000);
      if (!n) return n.take_error();
      o.timeout_ms = static_cast<uint32_t>(*n);
      return {};
    }
  }
  return usage_error("unhandled option " + opt);
}

}  // namespace

const char* op_name(Op op) {
  switch (op) {
    case Op::AllReduce: return "allr";
    case Op::AllGather: return "allg";
    case Op::ReduceScatter: return "redsct";
    case Op::SendRecv: return "sendrecv";
    case Op::AllToAll: return "alltoall";
    case Op::Broadcast: return "bcast";
    case Op::Reduce: return "reduce";
  }
  return "?";
}

bool parse_op(std::string_view s, Op* out) {
  struct Alias {
    const char* name;
    Op op;
  };
  static constexpr Alias kAliases[] = {
      {"allr", Op::AllReduce},
      {"all_reduce", Op::AllReduce},
      {"allreduce", Op::AllReduce},
      {"allg", Op::AllGather},
      {"all_gather", Op::AllGather},
      {"allgather", Op::AllGather},
      {"redsct", Op::ReduceScatter},
      {"reduce_scatter", Op::ReduceScatter},
      {"reducescatter", Op::ReduceScatter},
      {"sendrecv", Op::SendRecv},
      {"alltoall", Op::AllToAll},
      {"all_to_all", Op::AllToAll},
      {"bcast", Op::Broadcast},
      {"broadcast", Op::Broadcast},
      {"reduce", Op::Reduce},
  };
  const std::string l = lower(s);
  for (const Alias& a : kAliases) {
    if (l == a.name) {
      *out = a.op;
      return true;
    }
  }
  return false;
}

std::string refused_op(std::string_view s) {
  const std::string l = lower(s);
  if (l == "alltoallv") {
    return "alltoallv (all-to-all with a different count for each rank) is not supported: the "
           "engine's all-to-all moves equal blocks; run alltoall";
  }
  if (l == "allgv") {
    return "allgv (all-gather with a different count for each rank) is not supported: the "
           "engine's all-gather takes equal counts; run allg";
  }
  if (l == "permute") {
    return "permute (a collective permute over a source-to-target mapping you choose) is not "
           "supported: the one permutation nccom-test runs is the ring shift rank r -> r+1; "
           "run sendrecv";
  }
  return "";
}

bool op_reduces(Op op) {
  return op == Op::AllReduce || op == Op::ReduceScatter || op == Op::Reduce;
}
bool op_has_root(Op op) { return op == Op::Broadcast || op == Op::Reduce; }
bool op_has_in_place(Op op) { return op != Op::SendRecv && op != Op::AllToAll; }

const char* time_of_name(TimeOf t) {
  switch (t) {
    case TimeOf::Rank0: return "rank0";
    case TimeOf::Avg: return "avg";
    case TimeOf::Min: return "min";
    case TimeOf::Max: return "max";
  }
  return "?";
}

const char* net_name(Net n) {
  switch (n) {
    case Net::Default: return "default";
    case Net::Socket: return "socket";
    case Net::Ofi: return "ofi";
  }
  return "?";
}

Result<uint64_t> parse_bytes(std::string_view text) {
  std::string t = lower(text);
  if (t.size() > 1 && t.back() == 'b') t.pop_back();  // "64KB", "8B"
  if (t.size() > 1 && t.back() == 'i') t.pop_back();  // "64KiB" -> "64k"
  uint64_t mult = 1;
  if (!t.empty() && (t.back() == 'k' || t.back() == 'm' || t.back() == 'g')) {
    mult = t.back() == 'k' ? 1ull << 10 : t.back() == 'm' ? 1ull << 20 : 1ull << 30;
    t.pop_back();
  }
  if (t.empty() || !std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      t.size() > 12) {
    return usage_error("'" + std::string(text) +
                       "' is not a size (digits with an optional K, M or G)");
  }
  const uint64_t n = std::strtoull(t.c_str(), nullptr, 10);
  if (n > std::numeric_limits<uint64_t>::max() / mult) {
    return usage_error("'" + std::string(text) + "' is too large");
  }
  return n * mult;
}

namespace {

// A flag without a value: true when `a` is one (and `o` holds it).
bool take_flag(const std::vector<std::string>& args, size_t& i, Options& o) {
  const std::string& a = args[i];
  if (a == "--json") {
    o.json = true;
  } else if (a == "--stats") {
    o.stats = true;
  } else if (a == "--show-algorithm") {
    o.show_algorithm = true;
  } else if (a == "-c" || a == "--check") {
    o.check = true;
    // nccl-tests spells it "-c 1"; a following 0/1 is its value.
    if (i + 1 < args.size() && (args[i + 1] == "0" || args[i + 1] == "1"))
      o.check = args[++i] == "1";
  } else {
    return false;
  }
  return true;
}

// An operation named on the command line, once.
Status take_op(const std::string& a, Options& o) {
  if (const std::string why = refused_op(a); !why.empty()) return usage_error(why);
  Op op;
  if (!parse_op(a, &op)) {
    return usage_error("unknown operation '" + a +
                       "' (allr allg redsct sendrecv alltoall bcast reduce)");
  }
  if (std::find(o.ops.begin(), o.ops.end(), op) != o.ops.end()) {
    return usage_error("operation " + std::string(op_name(op)) + " is listed twice");
  }
  o.ops.push_back(op);
  return {};
}

// What the options mean together.
Status check_together(Options& o, bool factor_given, bool step_given) {
  if (o.ops.empty())
    return usage_error(
        "name at least one operation (allr allg redsct sendrecv alltoall bcast reduce)");
  if (factor_given && step_given) return usage_error("-f and -i exclude each other: give one step");
  if (step_given) o.step_factor = 0;
  if (o.min_bytes > o.max_bytes) {
    return usage_error("-b (" + std::to_string(o.min_bytes) + ") is larger than -e (" +
                       std::to_string(o.max_bytes) + ")");
  }
  if (o.step_factor != 0 && o.min_bytes == 0)
    return usage_error("-b must be at least 1 with -f (0 never grows)");
  if (size_series(o).size() > kMaxSizes) {
    return usage_error("the size series has more than " + std::to_string(kMaxSizes) +
                       " sizes: raise -i or -f");
  }
  if (o.ranks_given && o.root >= o.ranks) {
    return usage_error("--root " + std::to_string(o.root) + " is not a rank of -r " +
                       std::to_string(o.ranks));
  }
  return {};
}

}  // namespace

Result<Options> parse_options(const std::vector<std::string>& args) {
  Options o;
  bool factor_given = false, step_given = false;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    if (a == "-h" || a == "--help") {
      o.help = true;
      return o;
    }
    if (take_flag(args, i, o)) continue;
    if (a.rfind("--check=", 0) == 0) {
      const std::string v = a.substr(8);
      if (v != "0" && v != "1") return usage_error("--check takes 0 or 1, got '" + v + "'");
      o.check = v == "1";
      continue;
    }
    std::string value;
    bool inline_value = false;
    if (a.rfind("--", 0) == 0 && a.find('=') != std::string::npos) {
      value = a.substr(a.find('=') + 1);
      a = a.substr(0, a.find('='));
      inline_value = true;
    }
    if (const Spelling* s = find_valued(a)) {
      if (!inline_value) {
        if (i + 1 >= args.size()) return usage_error(a + " needs a value");
        value = args[++i];
      }
      if (s->key == Key::StepBytes) step_given = true;
      if (Status st = apply(s->key, a, value, o, factor_given); !st) return st.take_error();
      continue;
    }
    if (!a.empty() && a[0] == '-') return usage_error("unknown option " + a + " (see --help)");
    if (Status st = take_op(a, o); !st) return st.take_error();
  }
  if (Status st = check_together(o, factor_given, step_given); !st) return st.take_error();
  return o;
}

std::vector<uint64_t> size_series(const Options& o) {
  std::vector<uint64_t> out;
  for (uint64_t s = o.min_bytes; s <= o.max_bytes;) {
    out.push_back(s);
    if (out.size() > kMaxSizes) break;  // bounded: the caller reports it
    const uint64_t next = o.step_factor != 0 ? s * o.step_factor : s + o.step_bytes;
    if (next <= s) break;
    s = next;
  }
  return out;
}

const char* usage_text() {
  return "usage: nccom-test [options] OP [OP...]\n"
         "  OP: allr allg redsct sendrecv alltoall bcast reduce (one table each)\n"
         "  -r, --ranks N          ranks (local launch; default 2)\n"
         "      --nworkers N       the same (Neuron nccom-test's spelling)\n"
         "  -N, --nodes N          emulated hosts, ranks in blocks (default 1)\n"
         "      --nnodes N         the same (Neuron nccom-test's spelling)\n"
         "  -b, --minbytes SIZE    smallest message (default 8; K, M, G suffixes)\n"
         "  -e, --maxbytes SIZE    largest message (default 1M)\n"
         "  -f, --stepfactor F     multiply the size by F (default 2)\n"
         "  -i, --stepbytes SIZE   add SIZE instead\n"
         "  -n, --iters N          timed iterations (default 20)\n"
         "  -w, --warmup_iters N   warmup iterations (default 5)\n"
         "  -d, --datatype T       int8 uint8 int16 uint16 int32 uint32 int64 uint64\n"
         "                         fp16 bf16 fp32 fp64 fp8_e4m3 fp8_e5m2 (default fp32)\n"
         "  -o, --op OP            sum prod min max avg (default sum)\n"
         "      --root R           root of bcast and reduce (default 0)\n"
         "  -c, --check            check every result against a reference\n"
         "  -a, --average N        time shown: 0 rank 0's, 1 mean, 2 min, 3 max over ranks\n"
         "                         (default 3: the slowest rank's)\n"
         "      --stats            per-iteration min/p50/p90/p99/max after each table\n"
         "      --show-algorithm   an algo column (the engine's algorithm) per placement\n"
         "      --json             print JSON instead of the tables\n"
         "      --plot FILE.svg    write a chart of busbw and time against size\n"
         "      --net socket|ofi   network: the socket plugin, or libnccom-net over tcp;ofi_rxm\n"
         "      --timeout-ms MS    bound of every wait in a collective (default 60000)\n"
         "  -h, --help             this text\n"
         "Not supported: alltoallv and allgv (variable counts per rank), and permute\n"
         "(a chosen mapping; sendrecv runs the ring shift r -> r+1).\n"
         "Under mpirun or srun: one rank per process (see docs/tools/nccom-test.md).\n";
}

}  // namespace nccom::nccomtest
