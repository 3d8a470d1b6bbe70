// One rank of nccom-test (see bench.h and README.md).
#include "bench.h"

#include "pattern.h"
#include "plot_svg.h"
#include "report.h"

#include <client.h>
#include <nrt_emu.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace nccom::nccomtest {
namespace {

namespace eng = nrt_emu::engine;
using Clock = std::chrono::steady_clock;

// The ports after the configured one that libnccom's health service moves
// to when another job holds it (host/health/port_share.h, docs/health.md).
constexpr int kHealthPortSpan = 16;

// Where this job's health service answers nccom-ras on this host, or why it
// was not found.
struct HealthPort {
  std::string host, port;  // empty port: not found
  std::string why_not;
};

// The configured address (NCCOM_RAS_ADDR, NCCL_RAS_ADDR, else nccom-ras's
// default) is this job's when the service there reports this process; a job
// whose port another job held has moved to one of the next ports, and the
// first of those that reports this process is this job's. Asked once per
// process (the answer is settled when the communicator is up: libnccom
// checks its port before neuronInitComm returns). Refused ports cost a
// connect each; a service that answers, one collection (bounded by 1 s).
const HealthPort& own_health_port() {
  static const HealthPort found = [] {
    HealthPort h;
    ras::Query q;
    if (!ras::address_from_env(q, h.why_not)) return h;
    q.json = true;
    q.attempts = 2;
    q.handshake_ms = 500;
    q.connect_ms = 300;
    q.timeout_ms = 1000;
    h.host = q.host;
    const int first = std::atoi(q.port.c_str());
    const std::string mine = "\"pid\":" + std::to_string(getpid());
    for (int port = first; port > 0 && port < first + kHealthPortSpan && port <= 65535; ++port) {
      q.port = std::to_string(port);
      const ras::Answer a = ras::ask(q);
      if (!a.ok) continue;
      for (size_t at = a.report.find(mine); at != std::string::npos;
           at = a.report.find(mine, at + 1)) {
        const char next = at + mine.size() < a.report.size() ? a.report[at + mine.size()] : ',';
        if (next == ',' || next == '}') {
          h.port = q.port;
          return h;
        }
      }
    }
    h.why_not = "no nccom-ras service of this job on " + q.host + " ports " +
                std::to_string(first) + "-" + std::to_string(first + kHealthPortSpan - 1) +
                " (another program or job holds them, or the health service is off; "
                "libnccom's WARN says which)";
    return h;
  }();
  return found;
}

// A failure ends the rank at once, without teardown: the peers may already
// be gone, and the engine fails them within their timeout naming this rank.
// What the job's health service knows (nccom-ras's findings: processes that
// do not answer, ranks waiting or behind), for a failure message; "" when no
// service of this job answers or it finds nothing. Bounded by about 3 s
// once this job's port is known.
std::string health_view() {
  const HealthPort& own = own_health_port();
  if (own.port.empty()) return "";
  ras::Query q;
  q.host = own.host;
  q.port = own.port;
  q.attempts = 2;
  q.handshake_ms = 800;
  q.connect_ms = 500;
  q.timeout_ms = 1000;
  const ras::Answer a = ras::ask(q);
  if (!a.ok) return "";
  return ras::findings(a.report);
}

// The rank's closing line, cause first: "nccom-test: rank R: CAUSE
// (CONTEXT)", then what the health service says. CONTEXT is what the rank
// was doing, then what the runtime was doing inside it (outer first).
[[noreturn]] void die(const Placement& p, const std::string& cause, const std::string& context) {
  const std::string health = health_view();
  std::fprintf(stderr, "nccom-test: rank %d: %s%s%s%s%s\n", p.rank, cause.c_str(),
               context.empty() ? "" : " (", context.c_str(), context.empty() ? "" : ")",
               (health.empty() ? "" : ("; the health service says: " + health)).c_str());
  std::fflush(stdout);
  std::fflush(stderr);
  // Test seam (docs/tools/nccom-test.md): this rank, having said why it
  // failed, stays until a signal ends it — a rank slow to exit after its
  // own failure, while the peers it left fail and exit first.
  if (const char* h = std::getenv("NCCOM_TEST_DEBUG_HOLD_AFTER_FAILURE");
      h != nullptr && *h != '\0' && std::atoi(h) == p.rank) {
    for (;;) pause();
  }
  _exit(1);
}

[[noreturn]] void die(const Placement& p, const std::string& why) { die(p, why, ""); }

// A runtime failure split as the runtime words it: nrt_emu_ccom_error is
// "CAUSE (CONTEXT)" and nrt_emu_ccom_cause is CAUSE.
struct RuntimeReason {
  std::string cause;
  std::string context;  // "" when the runtime gave none
};

RuntimeReason runtime_reason(const nrt_emu_ccom_t* c) {
  const char* e = nrt_emu_ccom_error(c);
  const char* k = nrt_emu_ccom_cause(c);
  const std::string error = e != nullptr ? e : "";
  const std::string cause = k != nullptr ? k : "";
  if (!cause.empty() && error.size() > cause.size() + 3 &&
      error.compare(0, cause.size(), cause) == 0 && error.compare(cause.size(), 2, " (") == 0 &&
      error.back() == ')') {
    return {cause, error.substr(cause.size() + 2, error.size() - cause.size() - 3)};
  }
  return {error, ""};
}

// CONTEXT for die(): what the rank was doing, then the runtime's context.
std::string within(const std::string& doing, const RuntimeReason& r) {
  return r.context.empty() ? doing : doing + ": " + r.context;
}

// The runtime log's last line (the reason when init leaves no handle).
std::string last_log_line() {
  const int n = nrt_emu_log_snapshot(nullptr, 0);
  if (n <= 0) return "no message in the runtime log";
  std::string s(static_cast<size_t>(n) + 1, '\0');
  nrt_emu_log_snapshot(s.data(), s.size());
  s.resize(static_cast<size_t>(n));
  while (!s.empty() && s.back() == '\n') s.pop_back();
  const size_t nl = s.rfind('\n');
  return nl == std::string::npos ? s : s.substr(nl + 1);
}

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

class RankBench {
 public:
  RankBench(const Options& o, const Placement& p) : o_(o), p_(p), ts_(eng::dtype_size(o.dtype)) {}

  int run() {
    init();
    // Test seam (docs/tools/nccom-test.md): this rank dies as its peers enter the first
    // collective — after a barrier, so that every rank has finished joining
    // (and mapping its peers' memory) first.
    if (const char* k = std::getenv("NCCOM_TEST_DEBUG_KILL_RANK"); k != nullptr && *k) {
      if (nrt_emu_ccom_barrier(c_) != NRT_SUCCESS)
        die(p_, std::string("barrier before the test kill: ") + nrt_emu_ccom_error(c_));
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
    const RunInfo info = run_info();
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
      results.push_back(std::move(r));
    }
    const int64_t wrong = total_wrong(results);
    if (p_.rank == 0) report(info, results);
    nrt_emu_ccom_free(c_, a_);
    nrt_emu_ccom_free(c_, b_);
    nrt_emu_ccom_free(c_, stats_);
    nrt_emu_ccom_close(c_);
    if (wrong > 0) return p_.launcher == Launcher::LocalChild ? kExitCheckFailed : 1;
    return 0;
  }

 private:
  void print(const std::string& s) {
    std::fputs(s.c_str(), stdout);
    std::fflush(stdout);
  }

  RunInfo run_info() const {
    RunInfo i;
    i.ranks = p_.size;
    i.hosts = p_.hosts;
    i.launcher = p_.launcher == Launcher::LocalChild ? "local" : launcher_name(p_.launcher);
    i.net = o_.net;
    i.net_plugin = net_plugin_;
    i.dtype = o_.dtype;
    i.redop = o_.redop;
    i.root = o_.root;
    i.iters = o_.iters;
    i.warmup = o_.warmup;
    i.check = o_.check;
    i.timeout_ms = o_.timeout_ms;
    if (p_.rank == 0 && !o_.json) {  // only rank 0's table says it
      const HealthPort& own = own_health_port();
      if (!own.port.empty()) {
        i.health_address = own.host + ":" + own.port;
      } else {
        i.health_note = own.why_not;
      }
    }
    return i;
  }

  void init() {
    for (const auto& [name, value] : net_env(o_.net)) setenv(name.c_str(), value.c_str(), 1);
    size_t send_max = 0, buf_max = 0;
    for (Op op : o_.ops) {
      for (uint64_t bytes : size_series(o_)) {
        const Layout l = layout_for(op, bytes, ts_, p_.size);
        send_max = std::max(send_max, l.send_elems * ts_);
        buf_max = std::max(buf_max, inplace_elems(op, l) * ts_);
      }
    }
    // The engine's default device memory (256 MiB) unless the buffers need
    // more; half as much again is left for whatever the engine carves.
    const size_t need = send_max + buf_max + 4096;
    nrt_emu_ccom_config_t cfg{};
    cfg.struct_size = sizeof cfg;
    cfg.rank = p_.rank;
    cfg.rank_n = p_.size;
    cfg.root_comm_id = p_.root_comm_id.c_str();
    cfg.host = p_.host;
    cfg.local_rank = p_.local_rank;
    cfg.local_n = p_.local_n;
    cfg.device_bytes = need <= (192u << 20) ? 0 : need + need / 2 + (64u << 20);
    cfg.timeout_ms = o_.timeout_ms;
    if (nrt_emu_ccom_init(&cfg, &c_) != NRT_SUCCESS || c_ == nullptr) {
      const RuntimeReason r = init_reason();
      // Where the root address came from matters under a launcher; a local
      // rank's is always its parent's.
      const std::string from =
          p_.launcher == Launcher::LocalChild ? "" : " (from " + p_.root_source + ")";
      die(p_, r.cause, within("joining the communicator at " + p_.root_comm_id + from, r));
    }
    if (o_.net == Net::Ofi && nrt_emu_net_handle() == nullptr) {
      const char* why = nrt_emu_net_error();
      die(p_, why != nullptr && *why != '\0' ? why : "unknown reason",
          "--net ofi: loading libnccom-net.so");
    }
    net_plugin_ = query_net_plugin();
    check_net_selection();
    alloc(std::max<size_t>(send_max, 64), &a_, "send buffer");
    alloc(std::max<size_t>(buf_max, 64), &b_, "receive buffer");
    alloc(64, &stats_, "statistics buffer");
  }

  // What libnccom selected, asked of the runtime (neuronGetOFIHandle).
  static NetPluginInfo query_net_plugin() {
    nrt_emu_net_plugin_t q{};
    q.struct_size = sizeof q;
    NetPluginInfo info;
    if (nrt_emu_net_plugin(&q) != NRT_SUCCESS) {
      info.error = q.error != nullptr ? q.error : "the runtime could not say";
      return info;
    }
    info.known = true;
    info.name = q.name;
    info.layout = q.layout;
    info.version = q.version;
    info.file = q.file;
    info.adapted = q.adapted;
    info.from_runtime = q.from_runtime;
    return info;
  }

  // --net names a plugin; the run is only that plugin's if libnccom chose it.
  void check_net_selection() const {
    if (o_.net == Net::Default) return;
    const NetPluginInfo& p = net_plugin_;
    const std::string file =
        p.file.substr(p.file.rfind('/') == std::string::npos ? 0 : p.file.rfind('/') + 1);
    const bool chosen =
        p.known &&
        (o_.net == Net::Ofi ? p.from_runtime : !p.from_runtime && file == "libnccom-net-socket.so");
    if (chosen) return;
    const char* wanted = o_.net == Net::Ofi ? "the runtime's libnccom-net.so"
                                            : "nccom's socket plugin (libnccom-net-socket.so)";
    die(p_, std::string("--net ") + net_name(o_.net) + ": libnccom selected " + describe(p) +
                ", not " + wanted + "; NCCL_DEBUG=INFO shows why it chose it");
  }

  // nrt_emu_ccom_error(NULL) holds why the last init failed (cause first,
  // nrt_emu_ccom_cause(NULL) the cause alone); else the log's last line.
  RuntimeReason init_reason() const {
    RuntimeReason r = runtime_reason(c_);
    if (r.cause.empty()) r = {last_log_line(), ""};
    return r;
  }

  void alloc(size_t bytes, void** out, const char* what) {
    if (nrt_emu_ccom_alloc(c_, bytes, out) != NRT_SUCCESS || *out == nullptr) {
      const RuntimeReason r = runtime_reason(c_);
      die(p_, r.cause,
          within("allocating the " + std::string(what) + " (" + std::to_string(bytes) +
                     " B of device memory)",
                 r));
    }
  }

  nrt_emu_coll_args_t args(Op op, const Layout& l, const void* send, void* recv) const {
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

  void call(const nrt_emu_coll_args_t& a, Op op, uint64_t bytes, const char* what) {
    if (slow_ms_ > 0 && (slow_while_.empty() || ::access(slow_while_.c_str(), F_OK) == 0))
      std::this_thread::sleep_for(std::chrono::milliseconds(slow_ms_));
    if (nrt_emu_ccom_run(c_, &a) != NRT_SUCCESS) {
      const RuntimeReason r = runtime_reason(c_);
      die(p_, r.cause,
          within(std::string(op_name(op)) + " of " + std::to_string(bytes) + " B (" + what + ")",
                 r));
    }
  }

  // Mean time of one call over the timed iterations, in microseconds.
  double timed(const nrt_emu_coll_args_t& a, Op op, uint64_t bytes, const char* what) {
    for (int i = 0; i < o_.warmup; ++i) call(a, op, bytes, what);
    if (nrt_emu_ccom_barrier(c_) != NRT_SUCCESS)
      die(p_, std::string("barrier failed: ") + nrt_emu_ccom_error(c_));
    const auto t0 = Clock::now();
    for (int i = 0; i < o_.iters; ++i) call(a, op, bytes, what);
    return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / o_.iters;
  }

  // Fresh input, a poisoned output (so a call that writes nothing cannot
  // pass on an earlier iteration's result), one call, the comparison.
  int64_t checked(Op op, const Layout& l, bool in_place, uint64_t bytes) {
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

  Row row(Op op, uint64_t requested) {
    const Layout l = layout_for(op, requested, ts_, p_.size);
    auto* a = static_cast<unsigned char*>(a_);
    auto* b = static_cast<unsigned char*>(b_);
    double t[2];
    int64_t wrong[2] = {-1, -1};
    // Out of place: send from a, receive into b.
    fill_input(op, o_.dtype, o_.redop, p_.rank, p_.size, a, l.send_elems);
    t[0] = timed(args(op, l, a, b), op, l.bytes, "out-of-place");
    if (o_.check) wrong[0] = checked(op, l, false, l.bytes);
    // In place: one buffer, nccl-tests' offsets (where NCCL defines it).
    t[1] = 0;
    if (op_has_in_place(op)) {
      unsigned char* in = b + inplace_send_offset(op, l, p_.rank) * ts_;
      fill_input(op, o_.dtype, o_.redop, p_.rank, p_.size, in,
                 op == Op::AllGather ? l.count : l.send_elems);
      t[1] = timed(args(op, l, in, b + inplace_recv_offset(op, l, p_.rank) * ts_), op, l.bytes,
                   "in-place");
      if (o_.check) wrong[1] = checked(op, l, true, l.bytes);
    }
    combine(t, wrong);
    Row r;
    r.bytes = l.bytes;
    r.count = l.elems;
    r.out_of_place = make_timing(op, p_.size, l.bytes, t[0], wrong[0]);
    r.in_place = make_timing(op, p_.size, l.bytes, t[1], wrong[1]);
    r.in_place.ran = op_has_in_place(op);
    return r;
  }

  // The slowest rank's times and every rank's wrong counts, through the
  // engine (all-reduce in place in device memory): no side channel.
  void combine(double t[2], int64_t wrong[2]) {
    auto* d = static_cast<double*>(stats_);
    d[0] = t[0];
    d[1] = t[1];
    nrt_emu_coll_args_t a{};
    a.coll = NRT_EMU_ALL_REDUCE;
    a.dtype = NRT_EMU_FP64;
    a.op = NRT_EMU_MAX;
    a.count = 2;
    a.send = a.recv = stats_;
    if (nrt_emu_ccom_run(c_, &a) != NRT_SUCCESS)
      die(p_, std::string("combining the times failed: ") + nrt_emu_ccom_error(c_));
    t[0] = d[0];
    t[1] = d[1];
    if (!o_.check) return;
    auto* w = static_cast<int64_t*>(stats_);
    w[0] = wrong[0];
    w[1] = wrong[1];
    a.dtype = NRT_EMU_INT64;
    a.op = NRT_EMU_SUM;
    if (nrt_emu_ccom_run(c_, &a) != NRT_SUCCESS)
      die(p_, std::string("combining the wrong counts failed: ") + nrt_emu_ccom_error(c_));
    wrong[0] = w[0];
    wrong[1] = w[1];
  }

  void report(const RunInfo& info, const std::vector<OpResult>& results) {
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

  const Options& o_;
  const Placement& p_;
  int slow_ms_ = 0;         // NCCOM_TEST_DEBUG_SLOW_RANK
  std::string slow_while_;  // NCCOM_TEST_DEBUG_SLOW_WHILE
  const size_t ts_;
  nrt_emu_ccom_t* c_ = nullptr;
  void* a_ = nullptr;
  void* b_ = nullptr;
  void* stats_ = nullptr;
  NetPluginInfo net_plugin_;
};

}  // namespace

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
