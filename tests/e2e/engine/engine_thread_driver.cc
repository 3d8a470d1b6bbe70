// engine_thread_driver — several ranks as threads of one process (as libnrt
// runs one rank per NeuronCore in one process): each thread brings up its
// rank through nrt_emu_ccom_init and runs all-reduce, all-gather and
// all-to-all, checked exactly. The proxy workers are shared per
// NEURON_RT_RANKS_PER_NETWORK_PROXY group of local ranks.
//
//   engine_thread_driver NRANKS HOSTS     (NEURON_RT_ROOT_COMM_ID set by the caller)
// Prints workers=<proxy workers while all ranks are up>, engine=<line> for
// every runtime-log line of the engine about kangaRing lanes or its closing
// counts, then ok=1 (or error=...).
#include "engine_log.h"
#include "reference.h"

#include <nrt_emu.h>

#include <atomic>
#include <barrier>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace engine_test;
namespace eng = nrt_emu::engine;

std::string run_rank(int rank, int n, int hosts, std::barrier<>& up, std::atomic<int>& workers) {
  const int per = n / hosts;
  nrt_emu_ccom_config_t cfg{};
  cfg.struct_size = sizeof cfg;
  cfg.rank = rank;
  cfg.rank_n = n;
  cfg.host = rank / per;
  cfg.local_rank = rank % per;
  cfg.local_n = per;
  cfg.device_bytes = 16u << 20;
  cfg.timeout_ms = 60000;
  nrt_emu_ccom_t* cc = nullptr;
  if (nrt_emu_ccom_init(&cfg, &cc) != NRT_SUCCESS) {
    up.arrive_and_drop();
    return std::string("init: ") + nrt_emu_ccom_error(nullptr);
  }
  std::string err;
  const DType t = DType::Fp32;
  const uint64_t elems = 3001;
  void* in = nullptr;
  void* out = nullptr;
  if (nrt_emu_ccom_alloc(cc, elems * n * 4, &in) != NRT_SUCCESS ||
      nrt_emu_ccom_alloc(cc, elems * n * 4, &out) != NRT_SUCCESS)
    err = std::string("alloc: ") + nrt_emu_ccom_error(cc);
  for (int round = 0; round < 3 && err.empty(); ++round) {
    for (nrt_emu_coll_t coll : {NRT_EMU_ALL_REDUCE, NRT_EMU_ALL_GATHER, NRT_EMU_ALL_TO_ALL}) {
      const uint64_t salt = static_cast<uint64_t>(round) * 31 + coll;
      const uint64_t in_n = coll == NRT_EMU_ALL_TO_ALL ? elems * n : elems;
      fill(t, RedOp::Sum, rank, salt, 0, in_n, in);
      nrt_emu_coll_args_t a{};
      a.coll = coll;
      a.dtype = NRT_EMU_FP32;
      a.op = NRT_EMU_SUM;
      a.count = elems;
      a.send = in;
      a.recv = out;
      if (nrt_emu_ccom_run(cc, &a) != NRT_SUCCESS) {
        err = std::string("collective ") + std::to_string(coll) + ": " + nrt_emu_ccom_error(cc);
        break;
      }
      std::vector<uint8_t> want;
      if (coll == NRT_EMU_ALL_REDUCE) {
        want = reduced(t, RedOp::Sum, n, salt, 0, elems);
      } else {
        want.resize(elems * n * 4);
        std::vector<uint8_t> theirs(in_n * 4);
        for (int r = 0; r < n; ++r) {
          fill(t, RedOp::Sum, r, salt, 0, in_n, theirs.data());
          const size_t from =
              coll == NRT_EMU_ALL_TO_ALL ? static_cast<size_t>(rank) * elems * 4 : 0;
          std::memcpy(want.data() + static_cast<size_t>(r) * elems * 4, theirs.data() + from,
                      elems * 4);
        }
      }
      if (std::memcmp(out, want.data(), want.size()) != 0) {
        err = "collective " + std::to_string(coll) + " round " + std::to_string(round) +
              ": wrong result";
        break;
      }
    }
  }
  // Every rank is up and has run: count the proxy workers of the process.
  up.arrive_and_wait();
  if (rank == 0) workers = nrt_emu_proxy_worker_count();
  up.arrive_and_wait();
  nrt_emu_ccom_close(cc);
  return err;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::printf("error=usage: engine_thread_driver NRANKS HOSTS\n");
    return 1;
  }
  const int n = std::atoi(argv[1]);
  const int hosts = std::atoi(argv[2]);
  // trn3-switch-v1 has its own device count (16, the default there).
  const char* platform = std::getenv("NEURON_RT_EMU_PLATFORM");
  if (platform == nullptr || std::strcmp(platform, "trn3-switch-v1") != 0)
    setenv("NEURON_RT_EMU_DEVICES", std::to_string(n / hosts).c_str(), 1);
  std::barrier up(n);
  std::atomic<int> workers{-1};
  std::vector<std::string> errors(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back(
        [&, r] { errors[static_cast<size_t>(r)] = run_rank(r, n, hosts, up, workers); });
  for (std::thread& t : threads) t.join();
  std::printf("workers=%d\n", workers.load());
  for (const std::string& line : engine_log_lines()) std::printf("engine=%s\n", line.c_str());
  for (int r = 0; r < n; ++r) {
    if (!errors[static_cast<size_t>(r)].empty()) {
      std::printf("error=rank %d: %s\n", r, errors[static_cast<size_t>(r)].c_str());
      return 1;
    }
  }
  std::printf("ok=1\n");
  return 0;
}
