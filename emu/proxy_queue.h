// The proxy queues of the reference runtime, shaped like libnrt's
// enc_proxy_queue: one queue and one worker thread per shared-proxy group, in a
// process-global map gid → {queue, refcount} under a mutex.
//
// Group of a rank: rank / NEURON_RT_RANKS_PER_NETWORK_PROXY (1..4096,
// default 1). The worker is named "proxy-<tid>" and, before it takes any
// task, calls libnccom's neuronSetAffinity for the comm that created the
// group. Its loop: move queued tasks into active_tasks[rank]; step each
// active task once; drop the DONE ones; sleep on the condition variable when
// nothing is active or queued; sched_yield() when every active task is IDLE.
#pragma once

#include "proxy_task.h"

#include <nccom/util/result.h>

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
  int tid() const { return tid_; }
  int gid() const { return gid_; }

 private:
  void run();
  void take_pending();  // holds mutex_

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
  // Touched by the worker thread only.
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
