// A network proxy task of the reference runtime (libnrt's enc_proxy_task and
// its step()) and the status object its consumers wait on.
//
// A task is one execution of a comm over 1..4 streams. Run states:
//   INIT ──(skip)──────────────────────────────────────────────> DONE
//   INIT ── neuronStartNetworkProxy for every block of every stream
//        ──> WAITING_DEVICE_TRIGGER (gated) ──(no word reads −1; write 0)──┐
//        ──> PROGRESSING <─────────────────────────────────────────────────┘
//   PROGRESSING/IDLE: one neuronNetworkProxyProgress per unfinished stream
//        per step; IDLE when every one answered idle; a stream whose last
//        block answered done is stopped; all stopped ──> DONE.
// A block switch (a non-last block answered done): at the stream's next step
// neuronStopNetworkProxy, the blocks not run yet registered again, then the
// new block's progress call. Any non-zero answer from libnccom stops the
// started streams and finishes the task with that status.
//
// step() runs on the group's worker thread only; the status is shared.
#pragma once

#include <nccom/util/result.h>

#include <nrt_emu.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace nrt_emu::proxy {

// The libnccom entry points the proxy drives, copied from the loader's table.
struct NccomProxyFns {
  decltype(&neuronStartNetworkProxy) start = nullptr;
  decltype(&neuronNetworkProxyProgress) progress = nullptr;
  decltype(&neuronStopNetworkProxy) stop = nullptr;
  decltype(&neuronSetAffinity) set_affinity = nullptr;
};

const char* run_state_name(nrt_emu_task_run_state_t state);

class Status {
 public:
  Status(std::string name, int nec_dev, int gid);
  void publish_state(nrt_emu_task_run_state_t state) { state_.store(state); }
  nrt_emu_task_run_state_t run_state() const { return state_.load(); }
  // DONE with `rc`; `why` explains a failure and `cause` is libnccom's own
  // reason for it, when it forwarded one. Only the first call counts.
  void finish(NRT_STATUS rc, std::string why, std::string cause = "");
  // NRT_TIMEOUT or the finished status; sets message() and reason() on
  // timeout/failure. A failure is logged as libnrt logs it, without
  // libnccom's cause (libnccom logged that itself).
  NRT_STATUS wait(uint32_t timeout_ms);
  const char* message() const { return message_.c_str(); }
  const char* reason() const { return reason_.c_str(); }
  const std::string& name() const { return name_; }

 private:
  const std::string name_;
  const int nec_dev_;
  const int gid_;
  std::atomic<nrt_emu_task_run_state_t> state_{NRT_EMU_TASK_INIT};
  std::mutex mutex_;
  std::condition_variable cv_;
  bool finished_ = false;
  NRT_STATUS rc_ = NRT_SUCCESS;
  std::string why_;
  std::string cause_;
  std::string message_;  // the waiter's copy
  std::string reason_;   // the waiter's copy
};

class NetworkTask {
 public:
  // Checks the description (pointers, counts, distinct streams 0..3, gate
  // words); OK when valid, else the reason.
  static nccom::Status validate(const nrt_emu_network_task_t& task);
  NetworkTask(const NccomProxyFns& fns, void* comm, int rank, int nec_dev,
              const nrt_emu_network_task_t& task, std::shared_ptr<Status> status);

  nrt_emu_task_run_state_t step();
  // Finishes a task that will never be stepped again (queue destroyed).
  void abandon(NRT_STATUS rc, const std::string& why);
  int rank() const { return rank_; }

 private:
  struct StreamProgram {
    uint32_t stream = 0;
    std::vector<nrt_emu_proxy_block_t> blocks;
    size_t current = 0;
    bool started = false;    // at least one block registered, not stopped since
    bool switching = false;  // the current block is new: stop + re-register first
    bool finished = false;
  };

  nrt_emu_task_run_state_t init();
  nrt_emu_task_run_state_t wait_trigger();
  nrt_emu_task_run_state_t progress();
  bool register_blocks(StreamProgram& s, size_t from);
  bool stop_stream(StreamProgram& s, const char* when);
  nrt_emu_task_run_state_t fail(NRT_STATUS rc, std::string why);
  nrt_emu_task_run_state_t set(nrt_emu_task_run_state_t state);

  const NccomProxyFns fns_;
  void* const comm_;
  const int rank_;
  const int nec_dev_;
  const bool gated_;
  const bool skip_;
  std::vector<volatile uint32_t*> triggers_;
  std::vector<StreamProgram> streams_;
  std::shared_ptr<Status> status_;
  const uint64_t log_mark_;  // libnccom's forwarded lines before this task (runtime_log.h)
  nrt_emu_task_run_state_t state_ = NRT_EMU_TASK_INIT;
};

}  // namespace nrt_emu::proxy
