// One rank of nccom-test joining the communicator and describing its run: the
// configuration it resolves, the net plugin libnccom chose, the versions, the
// placement all-gather, its device buffers (see rank_bench.h).
#include "bench.h"
#include "config/config.h"
#include "core/context.h"
#include "pattern.h"
#include "rank_bench.h"
#include "rank_end.h"
#include "report.h"

#include <nccom/nrt_abi.h>

#include <nrt_emu.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" const char nccom_build_git_hash[];  // generated: cmake/WriteBuildId.cmake
extern "C" const char nccom_build_version[];

namespace nccom::nccomtest {
namespace {

// One rank's placement as the all-gather carries it: fixed size, strings
// NUL-padded (a longer host name is cut to 63 bytes).
struct PlaceRecord {
  int32_t rank, pid, host, device;
  char hostname[64];
  char digest[32];
};
static_assert(sizeof(PlaceRecord) == 112, "the placement record's size on every rank");

// A fixed-size text field as a string (never past its end).
template <size_t N>
std::string field(const char (&text)[N]) {
  return std::string(text, strnlen(text, N));
}

std::string dotted(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  return std::to_string(a) + "." + std::to_string(b) + "." + std::to_string(c) + "." +
         std::to_string(d);
}

// nccom-test's build, libnccom's (as the runtime loaded it) and the runtime's.
Versions versions() {
  Versions v;
  v.tool = nccom_build_version;
  v.tool_git = nccom_build_git_hash;
  if (const nec_version_info_t* n = nrt_emu_nccom_version(); n != nullptr) {
    v.nccom = dotted(n->major, n->minor, n->patch, n->maintenance);
    v.nccom_git = field(n->git_hash);
  }
  nrt_version_t r{};
  if (nrt_get_version(&r, sizeof r) == NRT_SUCCESS) {
    v.runtime = dotted(r.rt_major, r.rt_minor, r.rt_patch, r.rt_maintenance);
    v.runtime_git = field(r.git_hash);
  }
  return v;
}

}  // namespace

RunInfo RankBench::run_info() const {
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
  i.average = o_.average;
  i.stats = o_.stats;
  i.show_algorithm = o_.show_algorithm;
  const char* platform = nrt_emu_platform_name();
  i.platform = platform != nullptr ? platform : "";
  i.versions = versions();
  i.started_utc = started_utc_;
  i.placement = placement_;
  i.config_file = config_file_;
  i.config_cluster = config_cluster_;
  i.config_digest = config_digest_;
  i.config_error = config_error_;
  i.launch_env = launch_env_;
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

// The configuration this rank resolves as libnccom does (its loader, its
// knob tables and search paths), with the environment nccom-test set.
void RankBench::resolve_config() {
  for (const std::string& name : launch_variables()) {
    if (const char* v = std::getenv(name.c_str()); v != nullptr) launch_env_.emplace_back(name, v);
  }
  auto loaded = nccom::config::load(nccom::core::default_load_options());
  if (!loaded) {
    const std::string& why = loaded.error().message;
    config_error_ = "not resolved: " + why.substr(0, why.find('\n'));
    return;
  }
  config_file_ = loaded->file();
  config_cluster_ = loaded->cluster();
  config_digest_ = nccom::config::digest(*loaded);
}

// Every rank's pid, host name, emulated host, device and configuration
// digest, gathered through the engine (an in-place all-gather of one
// PlaceRecord per rank in device memory).
void RankBench::gather_placement() {
  void* buf = nullptr;
  alloc(sizeof(PlaceRecord) * static_cast<size_t>(p_.size), &buf, "placement buffer");
  auto* all = static_cast<PlaceRecord*>(buf);
  PlaceRecord& mine = all[p_.rank];
  std::memset(&mine, 0, sizeof mine);
  mine.rank = p_.rank;
  mine.pid = static_cast<int32_t>(getpid());
  mine.host = p_.host;
  mine.device = p_.local_rank;
  if (gethostname(mine.hostname, sizeof mine.hostname - 1) != 0)
    std::snprintf(mine.hostname, sizeof mine.hostname, "?");
  std::snprintf(mine.digest, sizeof mine.digest, "%s", config_digest_.c_str());
  nrt_emu_coll_args_t a{};
  a.coll = NRT_EMU_ALL_GATHER;
  a.dtype = NRT_EMU_UINT8;
  a.count = sizeof(PlaceRecord);
  a.send = &mine;
  a.recv = buf;
  if (nrt_emu_ccom_run(c_, &a) != NRT_SUCCESS) fail_in("gathering every rank's placement");
  for (int r = 0; r < p_.size; ++r) {
    const PlaceRecord& rec = all[r];
    placement_.push_back(
        {rec.rank, rec.pid, field(rec.hostname), rec.host, rec.device, field(rec.digest)});
  }
  nrt_emu_ccom_free(c_, buf);
}

void RankBench::init() {
  for (const auto& [name, value] : net_env(o_.net)) setenv(name.c_str(), value.c_str(), 1);
  resolve_config();
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
  const size_t iter_bytes =
      o_.stats ? sizeof(double) * static_cast<size_t>(std::min(o_.iters, kStatsChunk)) : 0;
  const size_t need =
      send_max + buf_max + iter_bytes + sizeof(PlaceRecord) * static_cast<size_t>(p_.size) + 4096;
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
  if (o_.stats) {
    alloc(iter_bytes, &iter_buf_, "per-iteration buffer");
    iter_us_.reserve(static_cast<size_t>(o_.iters));
  }
}

// What libnccom selected, asked of the runtime (neuronGetOFIHandle).
NetPluginInfo RankBench::query_net_plugin() {
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
void RankBench::check_net_selection() const {
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
RuntimeReason RankBench::init_reason() const {
  RuntimeReason r = runtime_reason(c_);
  if (r.cause.empty()) r = {last_log_line(), ""};
  return r;
}

// A runtime call on c_ failed while `doing`: the rank ends with the
// runtime's innermost cause first, then what it was doing (and the
// runtime's own context).
[[noreturn]] void RankBench::fail_in(const std::string& doing) const {
  const RuntimeReason r = runtime_reason(c_);
  die(p_, r.cause, within(doing, r));
}

void RankBench::alloc(size_t bytes, void** out, const char* what) {
  if (nrt_emu_ccom_alloc(c_, bytes, out) != NRT_SUCCESS || *out == nullptr) {
    fail_in("allocating the " + std::string(what) + " (" + std::to_string(bytes) +
            " B of device memory)");
  }
}

}  // namespace nccom::nccomtest
