// engine_rank_driver — one rank of the reference device engine as its own
// process: nrt_emu_ccom_init through NEURON_RT_ROOT_COMM_ID, then a matrix
// of collectives, each checked exactly against reference.h.
//
//   engine_rank_driver RANK NRANKS HOST LOCAL LOCAL_N [key=value...]
//     colls=allr,allg,redsct,bcast,reduce,alltoall,sendrecv   dtypes=all|fp32,int8,...
//     ops=all|sum,prod,...   counts=0,1,13,5003   inplace=0|1|both
//     execs=N (each case run N times)   roots=all|0
//     die=R   rank R kills itself before its first collective (an fp32
//             all-reduce of die_count elements, 262144 unless said); the
//             others report result=<status> and message=<error> and exit 0
//     stop=R  the same, but rank R stops itself (SIGSTOP) instead, and runs
//             the all-reduce too once continued
//     fence=0 no closing barrier and no close (the reference runtime's
//             close waits for every rank): each rank exits (exit(0), the
//             communicator still open) right after its last collective,
//             while the others may still be running theirs
// Prints key=value lines; ok=1 at the end, or error=... and exit 1. Before
// ok=1: runs=<collectives run>, ring_runs=<all-reduce/all-gather/
// reduce-scatter runs among them>, and engine=<line> for every line of the
// runtime log from the engine about kangaRing lanes or its closing counts.
#include "engine_log.h"
#include "reference.h"

#include <nrt_emu.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace engine_test;
namespace eng = nrt_emu::engine;

[[noreturn]] void die(const std::string& what) {
  std::printf("error=%s\n", what.c_str());
  std::fflush(stdout);
  _exit(1);
}

void say(const std::string& s) {
  std::printf("%s\n", s.c_str());
  std::fflush(stdout);
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t p = 0;
  while (p <= s.size()) {
    size_t q = s.find(',', p);
    if (q == std::string::npos) q = s.size();
    if (q > p) out.push_back(s.substr(p, q - p));
    p = q + 1;
  }
  return out;
}

struct Coll {
  const char* name;
  nrt_emu_coll_t coll;
  bool reduces;
  bool rooted;
};
const Coll kColls[] = {
    {"allr", NRT_EMU_ALL_REDUCE, true, false},       {"allg", NRT_EMU_ALL_GATHER, false, false},
    {"redsct", NRT_EMU_REDUCE_SCATTER, true, false}, {"bcast", NRT_EMU_BROADCAST, false, true},
    {"reduce", NRT_EMU_REDUCE, true, true},          {"alltoall", NRT_EMU_ALL_TO_ALL, false, false},
    {"sendrecv", NRT_EMU_PERMUTE, false, false}};

constexpr uint8_t kSentinel = 0xA5;

uint64_t g_runs = 0, g_ring_runs = 0;  // successful nrt_emu_ccom_run calls (see the header)

struct Case {
  const Coll* c;
  DType t;
  RedOp op;
  uint64_t count;
  bool inplace;
  int root;
};

std::string name_of(const Case& k) {
  return std::string(k.c->name) + "/" + eng::dtype_name(k.t) + "/" + eng::redop_name(k.op) + "/n" +
         std::to_string(k.count) + (k.inplace ? "/inplace" : "") +
         (k.c->rooted ? "/root" + std::to_string(k.root) : "");
}

// Runs one case `execs` times; "" or the first mismatch.
std::string run_case(nrt_emu_ccom_t* cc, int rank, int n, const Case& k, int execs, uint64_t salt) {
  const size_t es = eng::dtype_size(k.t);
  const uint64_t elems = k.count;
  uint64_t in_n = elems, out_n = elems;
  if (k.c->coll == NRT_EMU_ALL_GATHER) out_n = elems * n;
  if (k.c->coll == NRT_EMU_REDUCE_SCATTER) in_n = elems * n;
  if (k.c->coll == NRT_EMU_ALL_TO_ALL) in_n = out_n = elems * n;
  const size_t in_b = in_n * es, out_b = out_n * es;
  void* sbuf = nullptr;
  void* rbuf = nullptr;
  const size_t guard = 64;
  if (nrt_emu_ccom_alloc(cc, out_b + in_b + 2 * guard + 1, &rbuf) != NRT_SUCCESS)
    return std::string("alloc: ") + nrt_emu_ccom_error(cc);
  auto* base = static_cast<uint8_t*>(rbuf);
  uint8_t* out = base;
  uint8_t* in = base + out_b + guard;  // out-of-place: after a gap
  if (k.inplace) {
    if (k.c->coll == NRT_EMU_ALL_GATHER)
      in = out + static_cast<uint64_t>(rank) * elems * es;
    else if (k.c->coll == NRT_EMU_REDUCE_SCATTER) {
      in = base;
      out = base + static_cast<uint64_t>(rank) * elems * es;
    } else
      in = out;
  }
  sbuf = in;
  std::string result;
  for (int e = 0; e < execs && result.empty(); ++e) {
    const uint64_t s = salt + static_cast<uint64_t>(e) * 7919;
    std::memset(base, kSentinel, out_b + in_b + 2 * guard + 1);
    // Inputs (for in-place reduce-scatter/all-gather the input is a part of the
    // output buffer, written the same way).
    fill(k.t, k.op, rank, s, 0, in_n, in);
    nrt_emu_coll_args_t a{};
    a.coll = k.c->coll;
    a.dtype = static_cast<nrt_emu_dtype_t>(k.t);
    a.op = static_cast<nrt_emu_redop_t>(k.op);
    a.count = elems;
    a.send = sbuf;
    a.recv = out;
    a.root = k.root;
    a.send_to = (rank + 1) % n;  // sendrecv: a ring shift
    a.recv_from = (rank + n - 1) % n;
    if (NRT_STATUS st = nrt_emu_ccom_run(cc, &a); st != NRT_SUCCESS)
      return "run returned " + std::to_string(st) + ": " + nrt_emu_ccom_error(cc);
    ++g_runs;
    if (a.coll == NRT_EMU_ALL_REDUCE || a.coll == NRT_EMU_ALL_GATHER ||
        a.coll == NRT_EMU_REDUCE_SCATTER)
      ++g_ring_runs;
    // Expected output image.
    std::vector<uint8_t> want;
    bool writes = true;
    switch (k.c->coll) {
      case NRT_EMU_ALL_REDUCE: want = reduced(k.t, k.op, n, s, 0, elems); break;
      case NRT_EMU_REDUCE:
        writes = rank == k.root;
        if (writes) want = reduced(k.t, k.op, n, s, 0, elems);
        break;
      case NRT_EMU_REDUCE_SCATTER:
        want = reduced(k.t, k.op, n, s, static_cast<uint64_t>(rank) * elems, elems);
        break;
      case NRT_EMU_BROADCAST:
        want.resize(elems * es);
        fill(k.t, k.op, k.root, s, 0, elems, want.data());
        break;
      case NRT_EMU_ALL_GATHER:
        want.resize(out_b);
        for (int r = 0; r < n; ++r)
          fill(k.t, k.op, r, s, 0, elems, want.data() + static_cast<uint64_t>(r) * elems * es);
        break;
      case NRT_EMU_ALL_TO_ALL: {
        want.resize(out_b);
        std::vector<uint8_t> theirs(in_b);
        for (int r = 0; r < n; ++r) {
          fill(k.t, k.op, r, s, 0, in_n, theirs.data());
          if (elems > 0)  // an empty vector's data() may be NULL, which memcpy must not get even
                          // for 0 bytes
            std::memcpy(want.data() + static_cast<uint64_t>(r) * elems * es,
                        theirs.data() + static_cast<uint64_t>(rank) * elems * es, elems * es);
        }
        break;
      }
      case NRT_EMU_PERMUTE:
        want.resize(elems * es);
        fill(k.t, k.op, (rank + n - 1) % n, s, 0, elems, want.data());
        break;
      default: return "unexpected collective";
    }
    if (writes) {
      for (size_t b = 0; b < want.size(); ++b) {
        if (out[b] != want[b]) {
          const uint64_t i = b / es;
          char msg[256];
          std::snprintf(msg, sizeof msg,
                        "exec %d: element %llu is %g, expected %g (byte %zu: 0x%02x vs 0x%02x)", e,
                        static_cast<unsigned long long>(i), eng::load(k.t, out, i),
                        eng::load(k.t, want.data(), i), b, out[b], want[b]);
          result = msg;
          break;
        }
      }
    }
    // Beyond the output (out-of-place): untouched.
    if (result.empty() && !k.inplace) {
      for (size_t b = out_b; b < out_b + guard; ++b) {
        if (base[b] != kSentinel) {
          result = "exec " + std::to_string(e) + ": byte " + std::to_string(b - out_b) +
                   " past the output was written";
          break;
        }
      }
      if (result.empty() && !writes) {
        for (size_t b = 0; b < out_b; ++b) {
          if (out[b] != kSentinel) {
            result = "exec " + std::to_string(e) + ": a non-root's receive buffer was written";
            break;
          }
        }
      }
    }
  }
  nrt_emu_ccom_free(cc, rbuf);
  return result;
}

}  // namespace

int run(int argc, char** argv) {
  if (argc < 6) die("usage: engine_rank_driver RANK NRANKS HOST LOCAL LOCAL_N [key=value...]");
  const int rank = std::atoi(argv[1]);
  const int n = std::atoi(argv[2]);
  std::map<std::string, std::string> opt;
  for (int i = 6; i < argc; ++i) {
    const std::string a = argv[i];
    const size_t eq = a.find('=');
    if (eq == std::string::npos) die("option " + a + " is not key=value");
    opt[a.substr(0, eq)] = a.substr(eq + 1);
  }
  auto get = [&](const char* k, const char* def) {
    return opt.count(k) ? opt[k] : std::string(def);
  };
  const int stopped = std::atoi(get("stop", "-1").c_str());
  const int victim = stopped >= 0 ? stopped : std::atoi(get("die", "-1").c_str());

  nrt_emu_ccom_config_t cfg{};
  cfg.struct_size = sizeof cfg;
  cfg.rank = rank;
  cfg.rank_n = n;
  cfg.host = std::atoi(argv[3]);
  cfg.local_rank = std::atoi(argv[4]);
  cfg.local_n = std::atoi(argv[5]);
  cfg.device_bytes = 64u << 20;
  cfg.timeout_ms = static_cast<uint32_t>(std::atoi(get("timeout_ms", "60000").c_str()));
  nrt_emu_ccom_t* cc = nullptr;
  const bool devices_given = std::getenv("NEURON_RT_EMU_DEVICES") != nullptr;
  if (nrt_emu_ccom_init(&cfg, &cc) != NRT_SUCCESS)
    die(std::string("init: ") + nrt_emu_ccom_error(nullptr));
  // The device count the placement decided stays in this process: the
  // runtime never writes the environment its children inherit.
  if (!devices_given && std::getenv("NEURON_RT_EMU_DEVICES") != nullptr)
    die("nrt_emu_ccom_init wrote NEURON_RT_EMU_DEVICES into the environment");
  say("host_devices=" + std::to_string(nrt_emu_host_device_count(cfg.local_n)));
  say("channels=" + std::to_string(nrt_emu_ccom_channel_n(cc)));
  // The engine's algorithm for a 4 MiB call of each shape (above every
  // recursive-doubling threshold): algorithm_<coll>=ring|kangaring|peer.
  for (const auto& [key, coll] : {std::pair<const char*, int32_t>{"allr", NRT_EMU_ALL_REDUCE},
                                  {"allg", NRT_EMU_ALL_GATHER},
                                  {"redsct", NRT_EMU_REDUCE_SCATTER},
                                  {"bcast", NRT_EMU_BROADCAST},
                                  {"alltoall", NRT_EMU_ALL_TO_ALL}}) {
    nrt_emu_coll_args_t q{};
    q.coll = coll;
    q.dtype = NRT_EMU_FP32;
    q.count = size_t{1} << 20;
    const char* name = nullptr;
    if (nrt_emu_ccom_algorithm(cc, &q, &name) != NRT_SUCCESS)
      die(std::string("algorithm: ") + nrt_emu_ccom_error(cc));
    say(std::string("algorithm_") + key + "=" + name);
  }

  if (victim >= 0) {
    // Everyone is up (and has mapped its neighbours) before the victim goes.
    if (nrt_emu_ccom_barrier(cc) != NRT_SUCCESS)
      die(std::string("barrier: ") + nrt_emu_ccom_error(cc));
    say("started=1");
    if (rank == victim) raise(stopped >= 0 ? SIGSTOP : SIGKILL);
    void* buf = nullptr;
    if (nrt_emu_ccom_alloc(cc, 1 << 20, &buf) != NRT_SUCCESS) die("alloc");
    nrt_emu_coll_args_t a{};
    a.coll = NRT_EMU_ALL_REDUCE;
    a.dtype = NRT_EMU_FP32;
    a.count = std::strtoull(get("die_count", "262144").c_str(), nullptr, 10);
    if (a.count == 0 || a.count > (1 << 20) / 4) die("die_count must be 1..262144");
    a.send = a.recv = buf;
    const NRT_STATUS st = nrt_emu_ccom_run(cc, &a);
    say("result=" + std::to_string(st));
    std::string m = nrt_emu_ccom_error(cc);
    for (char& ch : m) ch = ch == '\n' ? '|' : ch;
    say("message=" + m);
    _exit(0);  // a peer may be dead: no collective teardown
  }

  std::vector<const Coll*> colls;
  for (const std::string& s :
       split(get("colls", "allr,allg,redsct,bcast,reduce,alltoall,sendrecv"))) {
    const Coll* found = nullptr;
    for (const Coll& c : kColls) found = s == c.name ? &c : found;
    if (found == nullptr) die("unknown collective " + s);
    colls.push_back(found);
  }
  std::vector<DType> types;
  for (const std::string& s : split(get("dtypes", "all"))) {
    if (s == "all") {
      for (int t = 0; t < eng::kDTypeCount; ++t) types.push_back(static_cast<DType>(t));
    } else if (auto t = eng::parse_dtype(s)) {
      types.push_back(*t);
    } else {
      die("unknown dtype " + s);
    }
  }
  std::vector<RedOp> ops;
  for (const std::string& s : split(get("ops", "all"))) {
    if (s == "all") {
      for (int o = 0; o < eng::kRedOpCount; ++o) ops.push_back(static_cast<RedOp>(o));
    } else if (auto o = eng::parse_redop(s)) {
      ops.push_back(*o);
    } else {
      die("unknown op " + s);
    }
  }
  std::vector<uint64_t> counts;
  for (const std::string& s : split(get("counts", "0,1,13,5003")))
    counts.push_back(std::strtoull(s.c_str(), nullptr, 10));
  const std::string ip = get("inplace", "both");
  std::vector<bool> places =
      ip == "both" ? std::vector<bool>{false, true} : std::vector<bool>{ip == "1"};
  const int execs = std::atoi(get("execs", "1").c_str());
  const bool all_roots = get("roots", "first") == "all";

  uint64_t salt = 1, cases = 0;
  for (const Coll* c : colls) {
    for (DType t : types) {
      // Non-reducing collectives do not depend on the op: run them once.
      std::vector<RedOp> these = c->reduces ? ops : std::vector<RedOp>{RedOp::Sum};
      for (RedOp op : these) {
        for (uint64_t count : counts) {
          for (bool inplace : places) {
            // all-to-all and permute never run in place
            if (inplace && (c->coll == NRT_EMU_ALL_TO_ALL || c->coll == NRT_EMU_PERMUTE)) continue;
            std::vector<int> roots = {c->rooted ? (all_roots ? 0 : static_cast<int>(salt % n)) : 0};
            if (c->rooted && all_roots)
              for (int r = 1; r < n; ++r) roots.push_back(r);
            for (int root : roots) {
              const Case k{c, t, op, count, inplace, root};
              if (std::string e = run_case(cc, rank, n, k, execs, salt * 1000003); !e.empty())
                die(name_of(k) + ": " + e);
              ++salt;
              ++cases;
            }
          }
        }
      }
    }
  }
  say("cases=" + std::to_string(cases));
  if (get("fence", "1") == "0") {
    say("ok=1");
    std::exit(0);
  }
  if (nrt_emu_ccom_barrier(cc) != NRT_SUCCESS)
    die(std::string("barrier: ") + nrt_emu_ccom_error(cc));
  nrt_emu_ccom_close(cc);
  say("runs=" + std::to_string(g_runs));
  say("ring_runs=" + std::to_string(g_ring_runs));
  for (const std::string& line : engine_log_lines()) say("engine=" + line);
  say("ok=1");
  return 0;
}

// An exception that reaches here (an allocation of this driver or of the
// reference runtime failed) is reported like any other failure.
int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::printf("error=exception: %s\n", e.what());
    std::fflush(stdout);
    _exit(1);
  }
}
