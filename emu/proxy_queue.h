// The proxy queues of the reference runtime, shaped like libnrt's
// enc_proxy_queue: one queue and one worker thread per shared-proxy group, in a
// process-global map gid → {queue, refcount} under a mutex.
//
// Group of a rank: rank / NEURON_RT_RANKS_PER_NETWORK_PROXY (1..4096,
// default 1). The worker is named "proxy-<tid>" and, before it takes any
// task, calls libnccom's neuronSetAffinity for the comm that created the
// group. Its loop: move queued tasks into active_tasks[rank]; step each
// active task once; drop the DONE ones; sleep on the condition variable when
// nothing is active or queued; sched_yield() when every active task is IDLE
// (also right after the last one finished: the device loop that was waiting
// for it usually submits the next one before the worker would sleep).
//
// A device loop of the process that waits on its network task may step the
// tasks itself (help()): whoever holds the step lock steps, one thread at a
// time, and the worker stands back (waits on the condition variable) while
// helps keep coming, so the rank has one polling thread instead of two. It
// sleeps up to 5 ms at a time while it stands back; a loop that leaves with
// its task unfinished wakes it at once (stop_helping()).
#pragma once

#include "proxy_task.h"

#include <nccom/util/result.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace nrt_emu::proxy {

class Queue {
 public:
  Queue(int gid, const NccomProxyFns& fns, void* affinity_comm);
  ~Queue();  // shutdown()
  Queue(const Queue&) = delete;
  Queue& operator=(const Queue&) = delete;

  // Starts the worker and waits until it knows its tid; false (logged, *why
  // set) when the thread cannot be created.
  nccom::Status start();
  // Sets stop, wakes and joins the worker. Tasks still queued or active
  // finish with NRT_CLOSED. Idempotent.
  void shutdown();
  void submit(std::shared_ptr<NetworkTask> task);
  // Called by a device loop of this process while it waits: steps the
  // active tasks once on the caller's thread unless another thread is
  // stepping them. True when a task moved.
  bool help();
  // Called by a device loop that stops helping while a task may still run
  // (it left its loop early): the worker stops standing back at once.
  void stop_helping();
  // How many times the worker began to stand back (for tests: a worker that
  // stands back is woken by its bound, by stop_helping() or by shutdown()).
  uint64_t stand_backs();
  int tid() const { return tid_; }
  int gid() const { return gid_; }

 private:
  void run();
  void loop();          // run() after the worker is placed: the task loop
  void take_pending();  // holds mutex_ and step_mutex_
  // One pass over the active tasks (holds step_mutex_): false when every
  // task was IDLE.
  bool step_all();

  const int gid_;
  const NccomProxyFns fns_;
  void* const affinity_comm_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<NetworkTask>> pending_;
  bool stop_ = false;
  bool started_ = false;
  int tid_ = 0;
  // Held by whoever steps the tasks: the worker, or a device loop helping.
  std::mutex step_mutex_;
  // When a device loop last helped (steady clock, ns): while one does, the
  // worker stands back instead of polling beside it.
  std::atomic<int64_t> last_help_ns_{0};
  bool worker_idle_ = false;  // the worker sleeps for want of tasks (mutex_)
  uint64_t stand_backs_ = 0;  // mutex_
  // Touched under step_mutex_ only.
  std::map<int, std::list<std::shared_ptr<NetworkTask>>> active_;
};

// One comm's seat in a group (the C handle nrt_emu_proxy_t).
struct Seat {
  void* comm;
  int rank;
  int nec_dev;
  int gid;
  NccomProxyFns fns;
  Queue* queue;
};

// Joins or creates the group of `rank`; NRT_SUCCESS and *out, else an error
// status with the reason logged.
NRT_STATUS acquire(void* comm, int rank, int nec_dev, Seat** out);
void release(Seat* seat);
int refcount(int gid);
int live_workers();

}  // namespace nrt_emu::proxy
