// A scripted stand-in for libnccom's proxy exports, installed into the
// reference runtime's loader (nrt_emu_debug_install_table), so the proxy
// worker can be driven without a network: every call is recorded with the
// calling thread, and each (comm, stream, basic block) answers as scripted.
#pragma once

#include <nrt_emu.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace emu_proxy_test {

enum class Fn { Affinity, Start, Progress, Stop };

struct Call {
  Fn fn;
  void* comm;
  uint32_t stream;  // 0 for Affinity
  uint32_t bb;      // 0 for Affinity and Stop
  int tid;
  bool operator==(const Call& o) const {
    return fn == o.fn && comm == o.comm && stream == o.stream && bb == o.bb;
  }
};

// How one (comm, stream, block) answers its progress ticks. Ticks count from
// the stream's last start after a stop.
struct Behaviour {
  int ticks_to_done = 1;  // the n-th tick answers done (0 = never)
  bool idle = false;      // answer idle on ticks that are not done
  int fail_at_tick = 0;   // the n-th tick fails with fail_rc (0 = never)
  NRT_STATUS fail_rc = NRT_NETWORK_PROXY_FAILURE;
};

class Script {
 public:
  static Script& get();
  void reset();
  void set(void* comm, uint32_t stream, uint32_t bb, Behaviour b);
  // Makes neuronStartNetworkProxy fail for this block.
  void fail_start(void* comm, uint32_t stream, uint32_t bb, NRT_STATUS rc);
  void set_affinity_rc(NRT_STATUS rc);

  std::vector<Call> calls() const;
  std::vector<Call> calls_of(void* comm) const;  // Affinity excluded
  int count(Fn fn, void* comm) const;

  // The table to install: the four proxy slots, the rest NULL.
  static nccom_export_table_t table();

  // Called by the fake exports.
  NRT_STATUS on_affinity(void* comm);
  NRT_STATUS on_start(void* comm, uint32_t stream, uint32_t bb);
  NRT_STATUS on_progress(void* comm, uint32_t stream, uint32_t bb, bool* idle, bool* done);
  NRT_STATUS on_stop(void* comm, uint32_t stream);

 private:
  using Key = std::tuple<void*, uint32_t, uint32_t>;
  mutable std::mutex mutex_;
  std::vector<Call> calls_;
  std::map<Key, Behaviour> behaviour_;
  std::map<Key, NRT_STATUS> start_rc_;
  std::map<Key, int> ticks_;
  NRT_STATUS affinity_rc_ = NRT_SUCCESS;
};

int gettid_now();
// Threads of this process (/proc/self/task).
int thread_count();
// The runtime log.
std::string runtime_log();
// "name" of a thread (/proc/self/task/<tid>/comm without the newline).
std::string thread_name(int tid);

}  // namespace emu_proxy_test

namespace emu_proxy_test {

// Sets or unsets (nullptr) one environment variable for a scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  bool had_ = false;
  std::string old_;
};

}  // namespace emu_proxy_test
