// Two ranks of one process joined by a ring of two over the NET_NEURON
// transport plugin (dlopened, as the host loads it) and any ncclNet_v6 table,
// with a lean scripted device: one basic block of one op per rank that sends
// `slices` slices to the other rank and receives as many from it, executed
// again and again. The device publishes FIFO entries (send slices while it
// holds credits, receives within a window), the proxy is ticked either by
// calling the transport's op_progress directly or through the host's
// nccom::proxy::Scheduler (what neuronNetworkProxyProgress runs), and every
// execution is checked: semaphore totals, index words back at 0 and, when
// data moves, a stamp at the head of every received slice.
//
// The time inside the proxy calls (op_progress + op_rearm, or
// Scheduler::progress) is measured per rank; the device's work is not.
#pragma once

#include "timed_net.h"

#include <nccom/net_v6.h>
#include <nccom/transport_plugin.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace nccom::bench {

struct WorldConfig {
  const ncclNet_v6_t* net = nullptr;
  uint32_t slices = 64;  // NET_TRANSFER entries per direction per block
  size_t slice_bytes = 4096;
  bool scheduler = false;        // tick through nccom::proxy::Scheduler
  uint32_t credits = 256;        // initial_send_credits (1..0x1FF)
  uint32_t window = 256;         // entries the device runs ahead of completions
  bool check_data = false;       // stamp and check every slice (data must move)
  bool yield_when_idle = false;  // sched_yield after a tick where nothing moved
};

struct RankStats {
  uint64_t progress_ns = 0;  // inside the proxy calls
  uint64_t progress_calls = 0;
  uint64_t executions = 0;
  uint64_t slices_sent = 0;
  uint64_t thread_cpu_ns = 0;  // CPU time of the thread that ran this rank
  CallTimes net;               // inside the net table (when it is timed_net)
};

// The NET_NEURON transport plugin, loaded and initialised once (NULL and
// *why when it cannot be); the build's plugin unless set_transport_path()
// named another .so first (to compare a modified transport).
const nccom_transport_ops_t* transport_ops(void** ctx, std::string* why);
void set_transport_path(const std::string& path);
// A net plugin .so (its ncclNetPlugin_v6, initialised; `provider` sets
// FI_PROVIDER first). NULL and *why when it cannot be.
const ncclNet_v6_t* load_net(const char* path, const char* provider, std::string* why);
// init (plugin WARNs to stderr) and at least one device.
bool init_net(const ncclNet_v6_t* net, std::string* why);

class World {
 public:
  explicit World(const WorldConfig& config);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

  // Runs `executions` executions on each rank, one thread for both ranks or
  // one per rank. Fills stats (per rank) and returns false with error() on
  // any failure (a proxy error, a wrong count, a wrong stamp, no progress
  // within `budget_s` seconds).
  bool run(uint64_t executions, bool threaded, double budget_s, std::array<RankStats, 2>* stats);

  struct Rank;

 private:
  void connect_links();
  void build(int r);
  void publish(Rank& k);
  bool tick(Rank& k, RankStats* st);
  bool finish_execution(Rank& k);
  bool run_rank(Rank& k, uint64_t executions, uint64_t deadline_ns, RankStats* st);

  WorldConfig cfg_;
  std::array<std::unique_ptr<Rank>, 2> ranks_;
  const nccom_transport_ops_t* t_ = nullptr;
  void* ctx_ = nullptr;
  std::string error_;
  std::atomic<bool> abort_{false};  // a rank failed: the other stops too
};

}  // namespace nccom::bench
