// e2e_rank_driver — one rank as its own process, through the real libnccom
// exports loaded by the reference runtime: init, neuronBuildGraphComm,
// neuronGetCommInfo, then what libnrt does for ring channels (RankDevice)
// and network tasks submitted to the runtime's proxy worker, while this
// thread plays the device.
//
//   e2e_rank_driver NRANKS RANK HOST LOCAL (--make-id | --id HEX) [key=value...]
//     sizes=a,b,c  dynamic=0|1  execs=N  streams=S  channels=C
//     shared_sems=0|1  early_send=0|1  early_recv=0|1  folds=1..8
//     victim=R     rank R publishes half its slices, prints victim_ready=1 and
//                  waits to be killed; the others report their task's result
//     stalled=R    rank R does what a victim does, but the test leaves it
//                  alive: its device stops, its process answers
//     malformed=1  calls neuronStartNetworkProxy with two bad FIFOs instead
//     mesh=1       neuronExpandConnectivity(MESH), then one op per peer over
//                  the mesh connections (channels = NRANKS-1, one stream)
// Prints key=value lines; ok=1 at the end, or error=... and exit 1.
#include "e2e_block.h"

#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

using proxy_e2e::Plan;
using proxy_e2e::RankDevice;
using Clock = std::chrono::steady_clock;

[[noreturn]] void die(const std::string& what) {
  std::printf("error=%s\n", what.c_str());
  std::fflush(stdout);
  _exit(1);  // no teardown: peers may be gone
}

void check(NRT_STATUS status, const char* what) {
  if (status != NRT_SUCCESS) die(std::string(what) + " returned " + std::to_string(status));
}

void say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

std::string log_text() {
  const int n = nrt_emu_log_snapshot(nullptr, 0);
  std::string s(static_cast<size_t>(n) + 1, '\0');
  nrt_emu_log_snapshot(s.data(), s.size());
  s.resize(static_cast<size_t>(n));
  return s;
}

std::string one_line(std::string s) {
  for (char& c : s) c = c == '\n' ? '|' : c;
  return s;
}

// Two malformed FIFOs (no EXEC_COMPLETE; an op index out of range), each
// refused at registration with its reason in the runtime log.
void run_malformed(const nccom_export_table_t* t, void* comm, RankDevice& dev) {
  proxy_e2e::StreamState& s = dev.streams()[0];
  struct Case {
    const char* name;
    const char* text;
  };
  for (const Case& c : {Case{"no_exec_complete", "EXEC_COMPLETE does not hold"},
                        Case{"op_out_of_range", "is out of range"}}) {
    std::vector<net_src_addr_t> src = s.src;
    if (std::string(c.name) == "no_exec_complete") {
      src.pop_back();
    } else {
      src[0].net_op_idx = static_cast<uint32_t>(s.info.size());
    }
    nrt_emu_log_clear();
    const NRT_STATUS st = t->neuronStartNetworkProxy(
        comm, 0, 7, s.info.data(), static_cast<int>(s.info.size()), src.data(),
        static_cast<int>(src.size()), s.dst.data(), static_cast<int>(s.dst.size()));
    const std::string log = log_text();
    say(std::string(c.name) + "_status=" + std::to_string(st));
    say(std::string(c.name) + "_logged=" + (log.find(c.text) != std::string::npos ? "1" : "0"));
    say(std::string(c.name) + "_log=" + one_line(log));
  }
  // Nothing was registered: a stop is clean, and the good block still starts.
  check(t->neuronStopNetworkProxy(comm, 0), "neuronStopNetworkProxy");
  check(t->neuronStartNetworkProxy(comm, 0, 7, s.info.data(), static_cast<int>(s.info.size()),
                                   s.src.data(), static_cast<int>(s.src.size()), s.dst.data(),
                                   static_cast<int>(s.dst.size())),
        "neuronStartNetworkProxy(good block)");
  check(t->neuronStopNetworkProxy(comm, 0), "neuronStopNetworkProxy");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6)
    die("usage: e2e_rank_driver NRANKS RANK HOST LOCAL (--make-id | --id HEX) [key=value...]");
  const int nranks = std::atoi(argv[1]);
  const int rank = std::atoi(argv[2]);
  const int host = std::atoi(argv[3]);
  const int local = std::atoi(argv[4]);
  const std::string mode = argv[5];
  int first_opt = 6;
  if (nrt_emu_load_nccom() != NRT_SUCCESS) die(std::string("load: ") + nrt_emu_last_error());
  const nccom_export_table_t* t = nrt_emu_nccom_table();

  enc_neuron_device_info_t devinfo{};
  devinfo.nec_dev_id = local;
  devinfo.mla_idx = local;
  devinfo.host_device_id = local;
  devinfo.virtual_server_id = static_cast<uint32_t>(host);

  char id[NCCL_UNIQUE_ID_BYTES];
  if (mode == "--make-id") {
    check(t->neuronGetUniqueId(id, nranks, "e2e"), "neuronGetUniqueId");
    static const char* digits = "0123456789abcdef";
    std::string hex;
    for (char c : id) {
      hex += digits[(c >> 4) & 15];
      hex += digits[c & 15];
    }
    say("id=" + hex);
  } else if (mode == "--id" && argc > 6) {
    const std::string hex = argv[6];
    if (hex.size() != 2 * NCCL_UNIQUE_ID_BYTES) die("the id must be 128 bytes in hex");
    for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; ++i)
      id[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
    first_opt = 7;
  } else {
    die("unknown mode " + mode);
  }
  std::map<std::string, std::string> opt;
  for (int i = first_opt; i < argc; ++i) {
    const std::string a = argv[i];
    const size_t eq = a.find('=');
    if (eq == std::string::npos) die("option " + a + " is not key=value");
    opt[a.substr(0, eq)] = a.substr(eq + 1);
  }
  auto num = [&](const char* k, int def) { return opt.count(k) ? std::atoi(opt[k].c_str()) : def; };
  Plan plan;
  for (size_t p = 0, q; p < opt["sizes"].size(); p = q + 1) {
    q = opt["sizes"].find(',', p);
    if (q == std::string::npos) q = opt["sizes"].size();
    plan.sizes.push_back(static_cast<uint32_t>(std::stoul(opt["sizes"].substr(p, q - p))));
  }
  if (plan.sizes.empty()) plan.sizes = {4096};
  plan.dynamic = num("dynamic", 0) != 0;
  plan.streams = num("streams", 1);
  plan.channels = num("channels", 1);
  plan.shared_sems = num("shared_sems", 0) != 0;
  plan.early_send = num("early_send", 0) != 0;
  plan.early_recv = num("early_recv", 0) != 0;
  plan.folds = num("folds", 1);
  const int execs = num("execs", 1);
  const int victim = num("victim", -1);
  const int stalled = num("stalled", -1);
  const bool stops = rank == victim || rank == stalled;
  const bool malformed = num("malformed", 0) != 0;
  plan.mesh = num("mesh", 0) != 0;
  if (plan.mesh) {
    plan.streams = 1;
    plan.channels = nranks - 1;
  }
  if (stops) plan.publish_limit = static_cast<uint32_t>(plan.sizes.size() / 2);
  // The test releases a survivor with SIGUSR1 once it has read its report;
  // the handler is in place before any report line is printed.
  if (victim >= 0) signal(SIGUSR1, [](int) { _exit(0); });

  void* comm = nullptr;
  check(t->neuronInitComm(&comm, nranks, id, rank, &devinfo, false), "neuronInitComm");
  check(t->neuronBuildGraphComm(comm), "neuronBuildGraphComm");
  nccl_comm_info_t info{};
  check(t->neuronGetCommInfo(comm, &info), "neuronGetCommInfo");
  say("channel_n=" + std::to_string(info.channel_n));
  if (plan.mesh)
    check(t->neuronExpandConnectivity(comm, ENC_CONNECTIVITY_MESH), "neuronExpandConnectivity");
  // Every shape the tests launch gets enough channels from a working graph
  // search: fewer is the product's failure, not the machine's.
  if (!plan.mesh && info.channel_n < plan.streams * plan.channels) {
    die("the graph built " + std::to_string(info.channel_n) + " ring channels, the case needs " +
        std::to_string(plan.streams * plan.channels));
  }
  std::vector<int> prev, next;
  for (int c = 0; c < info.channel_n; ++c) {
    prev.push_back(info.rings[c].prev);
    next.push_back(info.rings[c].next);
    say("prev" + std::to_string(c) + "=" + std::to_string(prev.back()) + "\nnext" +
        std::to_string(c) + "=" + std::to_string(next.back()));
  }
  say("prev=" + std::to_string(prev[0]) + "\nnext=" + std::to_string(next[0]));
  if (plan.mesh) {  // op k: to rank+k+1, from rank-k-1
    prev.clear();
    next.clear();
    for (int k = 0; k < nranks - 1; ++k) {
      next.push_back((rank + k + 1) % nranks);
      prev.push_back((rank - k - 1 + nranks) % nranks);
    }
  }
  auto dev = std::make_unique<RankDevice>(t, comm, rank, nranks, prev, next, plan);
  if (std::string e = dev->build(); !e.empty()) die("build: " + e);

  if (malformed) {
    run_malformed(t, comm, *dev);
  } else {
    nrt_emu_proxy_t* proxy = nullptr;
    check(nrt_emu_proxy_acquire(comm, local, local, &proxy), "nrt_emu_proxy_acquire");
    std::vector<nrt_emu_proxy_stream_t> streams;
    for (proxy_e2e::StreamState& s : dev->streams()) streams.push_back({s.stream, &s.block, 1});
    for (int exec = 0; exec < execs; ++exec) {
      dev->prepare(exec);
      nrt_emu_network_task_t task{};
      task.streams = streams.data();
      task.streams_n = static_cast<int>(streams.size());
      task.device_gated = true;
      for (size_t i = 0; i < streams.size(); ++i) task.trigger_words[i] = dev->streams()[i].trigger;
      task.exec_id = static_cast<uint64_t>(exec);
      nrt_emu_proxy_status_t* st = nullptr;
      check(nrt_emu_proxy_submit(proxy, &task, &st), "nrt_emu_proxy_submit");
      // The device is ready: post the trigger words, then publish.
      for (proxy_e2e::StreamState& s : dev->streams())
        __atomic_store_n(s.trigger, 1u, __ATOMIC_RELEASE);
      if (exec == 0) say("started=1");
      const auto deadline = Clock::now() + std::chrono::seconds(60);
      bool told = false;
      while (nrt_emu_proxy_run_state(st) != NRT_EMU_TASK_DONE && Clock::now() < deadline) {
        if (std::string e = dev->publish(); !e.empty()) die(e);
        if (stops && !told &&
            dev->published() >= 2 * plan.publish_limit * plan.streams * plan.channels) {
          say("victim_ready=1");
          told = true;
          alarm(60);  // bound: nobody killed or released us
          for (;;) pause();
        }
        sched_yield();
      }
      const NRT_STATUS r = nrt_emu_proxy_wait(st, 1000);
      if (victim >= 0) {
        say("result=" + std::to_string(r));
        say("message=" + one_line(nrt_emu_proxy_status_message(st)));
        say("log=" + one_line(log_text()));
        // A peer is dead: no collective teardown. Stay up (connections
        // open) until the test releases this rank (SIGUSR1, handler set at
        // start): it collects the victim's neighbours first, so their
        // failures are the victim's doing, then lets survivors go so that
        // the others see them leave.
        alarm(60);
        for (;;) pause();
      }
      if (r != NRT_SUCCESS) {
        die("exec " + std::to_string(exec) + ": task status " + std::to_string(r) + ": " +
            nrt_emu_proxy_status_message(st) + " | log: " + one_line(log_text()));
      }
      nrt_emu_proxy_status_free(st);
      if (std::string e = dev->check(exec); !e.empty()) die(e);
      say("exec" + std::to_string(exec) + "=ok");
    }
    nrt_emu_proxy_release(proxy);
  }
  // Nobody frees its comm (and closes its connections) before everyone is done.
  std::vector<int> fence(static_cast<size_t>(nranks), 0);
  check(t->neuronBootstrapAllGather(comm, fence.data(), sizeof(int), "fence"), "fence");
  dev.reset();  // deregisters before the comm goes
  check(t->neuronFreeComm(comm), "neuronFreeComm");
  say("ok=1");
  return 0;
}
