#include "proxy_queue.h"

#include "knobs.h"
#include "nccom_loader.h"
#include "runtime_log.h"

#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <exception>
#include <system_error>

namespace nrt_emu::proxy {
namespace {

std::atomic<int> g_live_workers{0};

struct Group {
  std::unique_ptr<Queue> queue;
  int refcount = 0;
};

std::mutex& groups_mutex() {
  static auto* m = new std::mutex;  // never destroyed: no exit-time teardown order issues
  return *m;
}
std::map<int, Group>& groups() {
  static auto* g = new std::map<int, Group>;
  return *g;
}

}  // namespace

Queue::Queue(int gid, const NccomProxyFns& fns, void* affinity_comm)
    : gid_(gid), fns_(fns), affinity_comm_(affinity_comm) {}

Queue::~Queue() { shutdown(); }

nccom::Status Queue::start() {
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error& e) {
    log::message(log::Level::Error, "Failed to create worker thread: %d", e.code().value());
    return nccom::make_error(NRT_RESOURCE,
                             std::string("cannot create the proxy worker thread: ") + e.what());
  }
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [this] { return started_; });
  return {};
}

void Queue::shutdown() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Queue::submit(std::shared_ptr<NetworkTask> task) {
  bool wake = false;
  {
    std::lock_guard lock(mutex_);
    pending_.push_back(std::move(task));
    wake = worker_idle_;
  }
  if (wake) cv_.notify_all();
}

namespace {
int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
// How long after a device loop's last help the worker keeps standing back.
constexpr int64_t kHelpWindowNs = 200'000;
// How long the worker sleeps at a time while it stands back. Each wake-up is
// a context switch on a CPU the helping loops need; a loop that leaves with
// its task unfinished wakes the worker at once (stop_helping()), so this
// only bounds the hand-back when a helper stalls.
constexpr int64_t kStandBackNs = 5'000'000;
}  // namespace

bool Queue::step_all() {
  bool all_idle = true;
  for (auto rank = active_.begin(); rank != active_.end();) {
    auto& tasks = rank->second;
    for (auto it = tasks.begin(); it != tasks.end();) {
      const nrt_emu_task_run_state_t state = (*it)->step();
      if (state == NRT_EMU_TASK_DONE) {
        it = tasks.erase(it);
        continue;
      }
      if (state != NRT_EMU_TASK_IDLE) all_idle = false;
      ++it;
    }
    rank = tasks.empty() ? active_.erase(rank) : std::next(rank);
  }
  return !all_idle;
}

bool Queue::help() {
  // Announced first: a worker inside a step stands back after it.
  last_help_ns_.store(now_ns(), std::memory_order_relaxed);
  std::unique_lock step(step_mutex_, std::try_to_lock);
  if (!step.owns_lock()) return false;
  {
    std::lock_guard lock(mutex_);
    if (stop_) return false;
    take_pending();
  }
  if (active_.empty()) return false;
  return step_all();
}

void Queue::stop_helping() {
  {
    std::lock_guard lock(mutex_);
    last_help_ns_.store(0, std::memory_order_relaxed);
  }
  cv_.notify_all();
}

uint64_t Queue::stand_backs() {
  std::lock_guard lock(mutex_);
  return stand_backs_;
}

void Queue::take_pending() {
  while (!pending_.empty()) {
    auto task = std::move(pending_.front());
    pending_.pop_front();
    const int rank = task->rank();
    active_[rank].push_back(std::move(task));
  }
}

void Queue::run() {
  ++g_live_workers;
  const int tid = static_cast<int>(syscall(SYS_gettid));
  char name[16];
  std::snprintf(name, sizeof name, "proxy-%d", tid);
  if (const int rc = pthread_setname_np(pthread_self(), name); rc != 0) {
    log::message(log::Level::Warn, "Cannot set thread name: %d", rc);
  }
  {
    std::lock_guard lock(mutex_);
    tid_ = tid;
    started_ = true;
  }
  cv_.notify_all();

  // Placement first, before any task, as libnrt does. A failure is not fatal:
  // the worker keeps the affinity it inherited.
  cpu_set_t saved;
  CPU_ZERO(&saved);
  const NRT_STATUS affinity = fns_.set_affinity(affinity_comm_, nullptr, &saved, -1);
  if (affinity != NRT_SUCCESS) {
    log::message(log::Level::Warn,
                 "proxy worker of group %d: neuronSetAffinity returned %d; the worker keeps its "
                 "inherited CPU affinity",
                 gid_, static_cast<int>(affinity));
  }

  try {
    loop();
  } catch (const std::exception& e) {
    // No exception may reach the thread's top. The tasks it held stay
    // unfinished: the device's wait for them ends at its bound, naming them.
    try {
      log::message(log::Level::Error,
                   "proxy worker of group %d stopped: %s; its network tasks will not complete",
                   gid_, e.what());
    } catch (...) {
      // Memory is short: the line is lost, the waits still end.
    }
  }
}

void Queue::loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (stop_) break;
    // A device loop stepping the tasks itself: stand back until the help is
    // 200 us old, sleeping up to 5 ms at a time (stop_helping() ends it early).
    if (now_ns() - last_help_ns_.load(std::memory_order_relaxed) < kHelpWindowNs) {
      ++stand_backs_;
      cv_.wait_for(lock, std::chrono::nanoseconds(kStandBackNs),
                   [this] { return stop_ || last_help_ns_.load(std::memory_order_relaxed) == 0; });
      continue;
    }
    lock.unlock();
    bool moved = false, empty = false;
    {
      std::lock_guard step(step_mutex_);
      {
        std::lock_guard relock(mutex_);
        take_pending();
      }
      empty = active_.empty();
      if (!empty) moved = step_all();
    }
    lock.lock();
    if (empty) {
      if (!pending_.empty() || stop_) continue;
      worker_idle_ = true;
      cv_.wait(lock, [this] { return stop_ || !pending_.empty(); });
      worker_idle_ = false;
      continue;
    }
    if (!moved) {
      lock.unlock();
      sched_yield();  // IDLE is not terminal: keep ticking, politely
      lock.lock();
    }
  }
  // Stopped: whatever is left will never run.
  lock.unlock();
  std::lock_guard step(step_mutex_);
  const std::string why = "the proxy queue of group " + std::to_string(gid_) +
                          " was destroyed before the task finished";
  for (auto& [rank, tasks] : active_) {
    for (auto& task : tasks) task->abandon(NRT_CLOSED, why);
  }
  active_.clear();
  --g_live_workers;
}

// ---- the process-global groups ------------------------------------------------

NRT_STATUS acquire(void* comm, int rank, int nec_dev, Seat** out) {
  if (out == nullptr || comm == nullptr) {
    log::message(log::Level::Error, "nrt_emu_proxy_acquire: %s is NULL",
                 out == nullptr ? "out" : "comm");
    return NRT_INVALID;
  }
  *out = nullptr;
  if (rank < 0) {
    log::message(log::Level::Error, "nrt_emu_proxy_acquire: rank %d is negative", rank);
    return NRT_INVALID;
  }
  const auto per_proxy = knobs::integer_or_warn(knobs::Var::kRanksPerProxy, 1);
  if (!per_proxy) return NRT_INVALID;  // logged by integer_or_warn
  const nccom_export_table_t* table = NccomLoader::instance().table();
  if (table == nullptr) {
    log::message(log::Level::Error,
                 "nrt_emu_proxy_acquire: libnccom is not loaded (nrt_emu_load_nccom)");
    return NRT_UNINITIALIZED;
  }
  NccomProxyFns fns{table->neuronStartNetworkProxy, table->neuronNetworkProxyProgress,
                    table->neuronStopNetworkProxy, table->neuronSetAffinity};
  const char* missing = fns.start == nullptr          ? "neuronStartNetworkProxy"
                        : fns.progress == nullptr     ? "neuronNetworkProxyProgress"
                        : fns.stop == nullptr         ? "neuronStopNetworkProxy"
                        : fns.set_affinity == nullptr ? "neuronSetAffinity"
                                                      : nullptr;
  if (missing != nullptr) {
    log::message(log::Level::Error, "nrt_emu_proxy_acquire: libnccom's table has no %s", missing);
    return NRT_UNINITIALIZED;
  }
  const int gid = rank / static_cast<int>(*per_proxy);

  std::lock_guard lock(groups_mutex());
  Group& group = groups()[gid];
  if (group.queue == nullptr) {
    auto queue = std::make_unique<Queue>(gid, fns, comm);
    if (nccom::Status s = queue->start(); !s) {
      groups().erase(gid);
      log::message(log::Level::Error, "proxy group %d: %s", gid, s.error().message.c_str());
      return s.error().status;
    }
    group.queue = std::move(queue);
  }
  ++group.refcount;
  *out = new Seat{comm, rank, nec_dev, gid, fns, group.queue.get()};
  return NRT_SUCCESS;
}

void release(Seat* seat) {
  if (seat == nullptr) return;
  std::unique_ptr<Queue> last;
  {
    std::lock_guard lock(groups_mutex());
    auto it = groups().find(seat->gid);
    if (it != groups().end() && --it->second.refcount == 0) {
      last = std::move(it->second.queue);
      groups().erase(it);
    }
  }
  delete seat;
  // Joined outside the map's lock: other groups stay usable meanwhile.
  if (last) last->shutdown();
}

int refcount(int gid) {
  std::lock_guard lock(groups_mutex());
  auto it = groups().find(gid);
  return it == groups().end() ? 0 : it->second.refcount;
}

int live_workers() { return g_live_workers.load(); }

}  // namespace nrt_emu::proxy
