#include "net/setup_calls.h"

#include "log/guarded.h"
#include "log/log.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <system_error>
#include <thread>

namespace nccom::net {
namespace {

using Clock = std::chrono::steady_clock;

struct Call {
  bool accept = false;
  int dev = 0;
  unsigned char handle[NCCL_NET_HANDLE_MAXSIZE] = {};  // the helper's copy
  unsigned char given[NCCL_NET_HANDLE_MAXSIZE] = {};   // what the caller handed in
  void* listen_comm = nullptr;
  Clock::time_point started;
  Clock::time_point finished_at;
  bool finished = false;
  bool abandoned = false;  // nobody will collect it: the helper cleans up
  ncclResult_t rc = ncclSuccess;
  void* comm = nullptr;
  std::thread helper;
};

}  // namespace

struct SetupCalls::State {
  explicit State(Net& n) : net(n) {}
  Net& net;
  mutable std::mutex mutex;
  std::condition_variable finished;
  std::map<void*, std::shared_ptr<Call>> connects;  // by the caller's handle buffer
  std::map<void*, std::shared_ptr<Call>> accepts;   // by listen comm
  // Connects whose caller went away (its handle buffer now holds another
  // handle): cleaned up by their helper.
  std::vector<std::shared_ptr<Call>> orphans;
  std::size_t helpers = 0;

  // Runs on the helper thread.
  static void run(const std::shared_ptr<State>& self, const std::shared_ptr<Call>& call) {
    void* comm = nullptr;
    ncclResult_t rc = ncclSystemError;
    (void)log::run_thread_body("net setup helper", "its connect or accept fails", [&] {
      rc = call->accept ? self->net.accept(call->listen_comm, &comm)
                        : self->net.connect(call->dev, call->handle, &comm);
    });
    std::unique_lock lock(self->mutex);
    call->rc = rc;
    call->comm = comm;
    call->finished = true;
    call->finished_at = Clock::now();
    if (call->abandoned) {
      // Nobody collects this one (detached by whoever gave up on it): close
      // what it made and, for an accept, the listen comm the caller already
      // closed on our side.
      if (call->accept) {
        self->accepts.erase(call->listen_comm);
      } else {
        std::erase(self->orphans, call);
      }
      lock.unlock();
      self->close_made(*call);
      if (call->accept) self->net.close_listen(call->listen_comm);
      lock.lock();
      --self->helpers;
      self->finished.notify_all();
      return;
    }
    self->finished.notify_all();
    // helpers is decremented by the collector after the join.
  }

  // With the lock held: start a helper for `call`.
  void start(const std::shared_ptr<State>& self, const std::shared_ptr<Call>& call) {
    call->started = Clock::now();
    ++helpers;
    try {
      call->helper = std::thread(&State::run, self, call);
    } catch (const std::system_error& e) {
      // No thread (out of threads or address space): the call is finished,
      // failed, and nobody may join or detach a helper it never had.
      --helpers;
      call->finished = true;
      call->finished_at = Clock::now();
      call->rc = ncclSystemError;
      NCCOM_WARN("net setup: cannot start a helper thread for a %s: %s",
                 call->accept ? "accept" : "connect", e.what());
    }
  }

  // The comm a finished call made, closed (nobody will use it).
  void close_made(const Call& call) {
    if (call.rc != ncclSuccess || call.comm == nullptr) return;
    if (call.accept) {
      net.close_recv(call.comm);
    } else {
      net.close_send(call.comm);
    }
  }

  // With the lock held: joins a finished call's helper (the lock is
  // released meanwhile).
  void join(std::unique_lock<std::mutex>& lock, const std::shared_ptr<Call>& call) {
    std::thread t = std::move(call->helper);
    lock.unlock();
    if (t.joinable()) t.join();
    lock.lock();
    --helpers;
  }

  // With the lock held: a finished call nobody will collect — joined, and
  // what it made closed.
  void dispose(std::unique_lock<std::mutex>& lock, const std::shared_ptr<Call>& call) {
    join(lock, call);
    lock.unlock();
    close_made(*call);
    lock.lock();
  }

  // With the lock held: wait briefly for `call`; when it finished, join it
  // and hand back its result (true), else false ("call again").
  bool collect(std::unique_lock<std::mutex>& lock, const std::shared_ptr<Call>& call) {
    finished.wait_for(lock, kCollectWait, [&] { return call->finished; });
    if (!call->finished) return false;
    join(lock, call);
    return true;
  }
};

// A connect result nobody collected for `stale` was given up on by its caller
// (callers retry within one pass of their connect loop).
SetupCalls::SetupCalls(Net& net, std::chrono::milliseconds stale)
    : state_(std::make_shared<State>(net)), stale_(stale) {}

void SetupCalls::close_stale() {
  State& s = *state_;
  std::unique_lock lock(s.mutex);
  const auto now = Clock::now();
  std::vector<std::shared_ptr<Call>> stale;
  for (auto it = s.connects.begin(); it != s.connects.end();) {
    if (it->second->finished && now - it->second->finished_at > stale_) {
      stale.push_back(it->second);
      it = s.connects.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& call : stale) s.dispose(lock, call);
}

SetupCalls::~SetupCalls() {
  // Helpers still inside the plugin keep the state alive; they are detached
  // here so that none is destroyed joinable.
  std::lock_guard lock(state_->mutex);
  for (auto* calls : {&state_->connects, &state_->accepts}) {
    for (auto& [key, call] : *calls) {
      if (call->helper.joinable()) call->helper.detach();
    }
  }
}

ncclResult_t SetupCalls::connect(int dev, void* handle, void** send_comm) {
  if (handle == nullptr || send_comm == nullptr) return ncclInvalidArgument;
  *send_comm = nullptr;
  close_stale();
  State& s = *state_;
  std::unique_lock lock(s.mutex);
  auto it = s.connects.find(handle);
  std::shared_ptr<Call> call;
  if (it != s.connects.end() &&
      (it->second->dev != dev ||
       std::memcmp(it->second->given, handle, sizeof it->second->given) != 0)) {
    // The buffer now holds another handle: its earlier connect was given up
    // on (the caller freed it and the memory was reused).
    std::shared_ptr<Call> old = it->second;
    s.connects.erase(it);
    it = s.connects.end();
    if (old->finished) {
      s.dispose(lock, old);
    } else {
      old->abandoned = true;
      if (old->helper.joinable()) old->helper.detach();
      s.orphans.push_back(old);
    }
  }
  if (it != s.connects.end()) {
    call = it->second;
  } else {
    call = std::make_shared<Call>();
    call->dev = dev;
    std::memcpy(call->handle, handle, sizeof call->handle);
    std::memcpy(call->given, handle, sizeof call->given);
    s.connects.emplace(handle, call);
    s.start(state_, call);
  }
  if (!s.collect(lock, call)) return ncclSuccess;
  s.connects.erase(handle);
  std::memcpy(handle, call->handle, sizeof call->handle);  // the plugin's connect stage
  *send_comm = call->rc == ncclSuccess ? call->comm : nullptr;
  return call->rc;
}

ncclResult_t SetupCalls::accept(void* listen_comm, void** recv_comm) {
  if (recv_comm == nullptr) return ncclInvalidArgument;
  *recv_comm = nullptr;
  State& s = *state_;
  std::unique_lock lock(s.mutex);
  auto it = s.accepts.find(listen_comm);
  std::shared_ptr<Call> call;
  if (it != s.accepts.end()) {
    call = it->second;
    if (call->abandoned) return ncclInvalidUsage;  // accept on a closed listen comm
  } else {
    call = std::make_shared<Call>();
    call->accept = true;
    call->listen_comm = listen_comm;
    s.accepts.emplace(listen_comm, call);
    s.start(state_, call);
  }
  if (!s.collect(lock, call)) return ncclSuccess;
  s.accepts.erase(listen_comm);
  *recv_comm = call->rc == ncclSuccess ? call->comm : nullptr;
  return call->rc;
}

ncclResult_t SetupCalls::close_listen(void* listen_comm) {
  State& s = *state_;
  std::unique_lock lock(s.mutex);
  auto it = s.accepts.find(listen_comm);
  if (it != s.accepts.end()) {
    std::shared_ptr<Call> call = it->second;
    if (!call->finished) {
      call->abandoned = true;  // the helper closes it when the plugin returns
      if (call->helper.joinable()) call->helper.detach();
      return ncclSuccess;
    }
    // Finished but never collected: close what it made, then the listener.
    s.accepts.erase(it);
    s.dispose(lock, call);
  }
  lock.unlock();
  return s.net.close_listen(listen_comm);
}

std::vector<SetupCalls::InFlight> SetupCalls::in_flight() const {
  const State& s = *state_;
  std::lock_guard lock(s.mutex);
  std::vector<InFlight> out;
  const auto now = Clock::now();
  auto add = [&](const std::shared_ptr<Call>& call) {
    if (call->finished) return;
    out.push_back({(call->accept ? std::string("accept")
                                 : "connect (device " + std::to_string(call->dev) + ")") +
                       (call->abandoned ? ", given up on" : ""),
                   std::chrono::duration_cast<std::chrono::milliseconds>(now - call->started)});
  };
  for (const auto& [key, call] : s.connects) add(call);
  for (const auto& [key, call] : s.accepts) add(call);
  for (const auto& call : s.orphans) add(call);
  std::stable_sort(out.begin(), out.end(),
                   [](const InFlight& a, const InFlight& b) { return a.running > b.running; });
  return out;
}

bool SetupCalls::running(const void* key) const {
  std::lock_guard lock(state_->mutex);
  void* k = const_cast<void*>(key);
  for (const auto* calls : {&state_->connects, &state_->accepts}) {
    auto it = calls->find(k);
    if (it != calls->end() && !it->second->finished) return true;
  }
  return false;
}

std::size_t SetupCalls::helpers() const {
  std::lock_guard lock(state_->mutex);
  return state_->helpers;
}

// Net's constructor and destructor live here, where SetupCalls is complete.
Net::Net(PluginInfo info, unsigned capabilities)
    : info_(std::move(info)), capabilities_(capabilities) {}
Net::~Net() = default;

SetupCalls& Net::setup_calls() {
  std::lock_guard lock(setup_calls_mutex_);
  if (!setup_calls_) setup_calls_ = std::make_unique<SetupCalls>(*this);
  return *setup_calls_;
}

std::string describe_in_flight(Net& net) {
  const auto calls = net.setup_calls().in_flight();
  if (calls.empty()) return "";
  std::string text = "the net plugin " + describe(net.info()) + " from " + net.info().origin +
                     " has " + std::to_string(calls.size()) + " call(s) that have not returned:";
  for (size_t i = 0; i < calls.size(); ++i) {
    text += (i == 0 ? " " : ", ") + calls[i].call + " for " +
            std::to_string(calls[i].running.count()) + " ms";
  }
  return text;
}

}  // namespace nccom::net
