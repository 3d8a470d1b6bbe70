// nccom_bench_proxy_stack — the whole proxy path, for comparison with the
// plugin-level figures of nccom_bench_proxy: two ranks as threads of one
// process on two emulated hosts, brought up by the reference runtime
// (nrt_emu_ccom_init: libnccom loaded as libnrt loads it, neuronInitComm,
// neuronBuildGraphComm), running all-gathers on one ring channel. Every hop
// is a NET_NEURON hop, so each slice goes: engine (device) → index word →
// the runtime's proxy worker → neuronNetworkProxyProgress → Scheduler →
// NET_NEURON op → net plugin, and back to the device through the semaphores.
//
//   nccom_bench_proxy_stack NET_PLUGIN.so [--slices-per-op N] [--slice-bytes B] [--ops K]
//                           [--port P]
//
// NET_PLUGIN.so is given to libnccom as net.plugin (NCCL_NET_PLUGIN), with
// the runtime's own plugin disabled; build/lib/bench/libnccom-net-zero.so is
// the zero-cost net in copy mode. Prints one table row:
// | net | slice B | slices/op/rank | ops | wall ms | slices/s | µs/op |
#include <nrt_emu.h>

#include <barrier>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

namespace {

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

struct Args {
  std::string net;
  uint64_t slices = 64;  // slices each rank sends per all-gather
  uint64_t slice_bytes = 4096;
  uint64_t ops = 2000;  // all-gathers timed (after 10 % warm-up)
  int port = 0;
};

// One rank: init, warm-up, timed all-gathers, a check of the last result.
std::string run_rank(int rank, const Args& a, std::barrier<>& sync, uint64_t* ns) {
  nrt_emu_ccom_config_t cfg{};
  cfg.struct_size = sizeof cfg;
  cfg.rank = rank;
  cfg.rank_n = 2;
  cfg.host = rank;  // two emulated hosts: the hop is a network hop
  cfg.local_rank = 0;
  cfg.local_n = 1;
  cfg.device_bytes = 4 * a.slices * a.slice_bytes + (64u << 20);
  cfg.timeout_ms = 60000;
  nrt_emu_ccom_t* cc = nullptr;
  if (nrt_emu_ccom_init(&cfg, &cc) != NRT_SUCCESS) {
    sync.arrive_and_drop();
    return std::string("init: ") + nrt_emu_ccom_error(nullptr);
  }
  std::string err;
  const uint64_t bytes = a.slices * a.slice_bytes;  // this rank's input
  void* in = nullptr;
  void* out = nullptr;
  if (nrt_emu_ccom_alloc(cc, bytes, &in) != NRT_SUCCESS ||
      nrt_emu_ccom_alloc(cc, 2 * bytes, &out) != NRT_SUCCESS) {
    err = std::string("alloc: ") + nrt_emu_ccom_error(cc);
  }
  if (err.empty()) {
    for (uint64_t i = 0; i < bytes; ++i) static_cast<uint8_t*>(in)[i] = uint8_t(rank * 97 + i * 13);
  }
  nrt_emu_coll_args_t c{};
  c.coll = NRT_EMU_ALL_GATHER;
  c.dtype = NRT_EMU_UINT8;
  c.op = NRT_EMU_SUM;
  c.count = bytes;
  c.send = in;
  c.recv = out;
  const uint64_t warm = a.ops / 10 + 1;
  for (uint64_t k = 0; k < warm && err.empty(); ++k) {
    if (nrt_emu_ccom_run(cc, &c) != NRT_SUCCESS)
      err = std::string("warm-up: ") + nrt_emu_ccom_error(cc);
  }
  sync.arrive_and_wait();  // both ranks start the clock together
  const uint64_t t0 = now_ns();
  for (uint64_t k = 0; k < a.ops && err.empty(); ++k) {
    if (nrt_emu_ccom_run(cc, &c) != NRT_SUCCESS)
      err = std::string("run: ") + nrt_emu_ccom_error(cc);
  }
  *ns = now_ns() - t0;
  for (uint64_t i = 0; i < 2 * bytes && err.empty(); ++i) {
    const int from = static_cast<int>(i / bytes);
    if (static_cast<uint8_t*>(out)[i] != uint8_t(from * 97 + (i % bytes) * 13)) {
      err = "wrong byte " + std::to_string(i) + " of the all-gather";
    }
  }
  sync.arrive_and_wait();
  nrt_emu_ccom_close(cc);
  return err;
}

bool number(const char* s, uint64_t* out) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s, &end, 10);
  if (*s == '\0' || *s == '-' || *end != '\0') return false;
  *out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: nccom_bench_proxy_stack NET_PLUGIN.so [--slices-per-op N] "
                 "[--slice-bytes B] [--ops K] [--port P]\n");
    return 2;
  }
  a.net = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    uint64_t v = 0;
    if (!number(argv[i + 1], &v) || v == 0) {
      std::fprintf(stderr, "bad value for %s\n", argv[i]);
      return 2;
    }
    if (std::strcmp(argv[i], "--slices-per-op") == 0)
      a.slices = v;
    else if (std::strcmp(argv[i], "--slice-bytes") == 0)
      a.slice_bytes = v;
    else if (std::strcmp(argv[i], "--ops") == 0)
      a.ops = v;
    else if (std::strcmp(argv[i], "--port") == 0 && v < 65536)
      a.port = static_cast<int>(v);
    else {
      std::fprintf(stderr, "unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  if (a.slice_bytes < 4096 || a.slice_bytes > (16u << 20) || a.slices > 100000) {
    std::fprintf(stderr,
                 "--slice-bytes must be 4096..16 MiB (the engine's range), "
                 "--slices-per-op at most 100000\n");
    return 2;
  }
  if (a.port == 0) a.port = 20000 + static_cast<int>(now_ns() % 20000);
  const std::string port = std::to_string(a.port);
  setenv("NEURON_RT_ROOT_COMM_ID", ("127.0.0.1:" + port).c_str(), 1);
  setenv("NCCOM_BOOTSTRAP_SECRET", ("proxy-stack-" + port).c_str(), 1);
  setenv("CCOM_SOCKET_IFNAME", "lo", 1);
  setenv("NEURON_RT_EMU_DEVICES", "1", 1);
  setenv("NEURON_RT_EMU_SLICE_BYTES", std::to_string(a.slice_bytes).c_str(), 1);
  setenv("NEURON_RT_EMU_ENGINE_CHANNELS", "1", 1);
  setenv("NCCOM_NET_USE_RUNTIME_PLUGIN", "false", 1);
  setenv("NCCL_NET_PLUGIN", a.net.c_str(), 1);
  setenv("NCCOM_CONFIG", "", 1);
  if (getenv("NCCL_DEBUG") == nullptr) setenv("NCCL_DEBUG", "WARN", 1);

  std::barrier sync(2);
  std::vector<std::string> errors(2);
  uint64_t ns[2] = {};
  std::thread t0([&] { errors[0] = run_rank(0, a, sync, &ns[0]); });
  std::thread t1([&] { errors[1] = run_rank(1, a, sync, &ns[1]); });
  t0.join();
  t1.join();
  for (int r = 0; r < 2; ++r) {
    if (!errors[r].empty()) {
      std::fprintf(stderr, "rank %d: %s\n", r, errors[r].c_str());
      return 1;
    }
  }
  const uint64_t wall = ns[0] > ns[1] ? ns[0] : ns[1];
  const double slices = 2.0 * double(a.slices) * double(a.ops);  // both ranks' sends
  std::printf("| %s | %llu | %llu | %llu | %.1f | %.0f | %.2f |\n", a.net.c_str(),
              (unsigned long long)a.slice_bytes, (unsigned long long)a.slices,
              (unsigned long long)a.ops, double(wall) / 1e6, slices * 1e9 / double(wall),
              double(wall) / double(a.ops) / 1e3);
  return 0;
}
