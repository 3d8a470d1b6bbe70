#include "proxy_script.h"

#include "child_process.h"

#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

namespace emu_proxy_test {
namespace {

NRT_STATUS fake_start(void* comm, uint32_t stream, uint32_t bb, net_ops_info_t*, int,
                      net_src_addr_t*, int, net_dest_addr_t*, int) {
  return Script::get().on_start(comm, stream, bb);
}
NRT_STATUS fake_progress(void* comm, uint32_t stream, uint32_t bb, bool* idle, bool* done) {
  return Script::get().on_progress(comm, stream, bb, idle, done);
}
NRT_STATUS fake_stop(void* comm, uint32_t stream) { return Script::get().on_stop(comm, stream); }
NRT_STATUS fake_affinity(void* comm, nccom_cpu_set_t*, nccom_cpu_set_t*, int) {
  return Script::get().on_affinity(comm);
}

}  // namespace

Script& Script::get() {
  static Script script;
  return script;
}

void Script::reset() {
  std::lock_guard lock(mutex_);
  calls_.clear();
  behaviour_.clear();
  start_rc_.clear();
  ticks_.clear();
  affinity_rc_ = NRT_SUCCESS;
}

void Script::set(void* comm, uint32_t stream, uint32_t bb, Behaviour b) {
  std::lock_guard lock(mutex_);
  behaviour_[{comm, stream, bb}] = b;
}

void Script::fail_start(void* comm, uint32_t stream, uint32_t bb, NRT_STATUS rc) {
  std::lock_guard lock(mutex_);
  start_rc_[{comm, stream, bb}] = rc;
}

void Script::set_affinity_rc(NRT_STATUS rc) {
  std::lock_guard lock(mutex_);
  affinity_rc_ = rc;
}

std::vector<Call> Script::calls() const {
  std::lock_guard lock(mutex_);
  return calls_;
}

std::vector<Call> Script::calls_of(void* comm) const {
  std::lock_guard lock(mutex_);
  std::vector<Call> out;
  for (const Call& c : calls_) {
    if (c.comm == comm && c.fn != Fn::Affinity) out.push_back(c);
  }
  return out;
}

int Script::count(Fn fn, void* comm) const {
  std::lock_guard lock(mutex_);
  int n = 0;
  for (const Call& c : calls_) n += (c.fn == fn && c.comm == comm) ? 1 : 0;
  return n;
}

nccom_export_table_t Script::table() {
  nccom_export_table_t t{};
  t.neuronStartNetworkProxy = &fake_start;
  t.neuronNetworkProxyProgress = &fake_progress;
  t.neuronStopNetworkProxy = &fake_stop;
  t.neuronSetAffinity = &fake_affinity;
  return t;
}

NRT_STATUS Script::on_affinity(void* comm) {
  std::lock_guard lock(mutex_);
  calls_.push_back({Fn::Affinity, comm, 0, 0, gettid_now()});
  return affinity_rc_;
}

NRT_STATUS Script::on_start(void* comm, uint32_t stream, uint32_t bb) {
  std::lock_guard lock(mutex_);
  calls_.push_back({Fn::Start, comm, stream, bb, gettid_now()});
  auto it = start_rc_.find({comm, stream, bb});
  return it == start_rc_.end() ? NRT_SUCCESS : it->second;
}

NRT_STATUS Script::on_progress(void* comm, uint32_t stream, uint32_t bb, bool* idle, bool* done) {
  std::lock_guard lock(mutex_);
  calls_.push_back({Fn::Progress, comm, stream, bb, gettid_now()});
  const Behaviour b = behaviour_[{comm, stream, bb}];
  const int tick = ++ticks_[{comm, stream, bb}];
  if (b.fail_at_tick != 0 && tick >= b.fail_at_tick) return b.fail_rc;
  *done = b.ticks_to_done != 0 && tick >= b.ticks_to_done;
  *idle = !*done && b.idle;
  return NRT_SUCCESS;
}

NRT_STATUS Script::on_stop(void* comm, uint32_t stream) {
  std::lock_guard lock(mutex_);
  calls_.push_back({Fn::Stop, comm, stream, 0, gettid_now()});
  for (auto& [key, ticks] : ticks_) {
    if (std::get<0>(key) == comm && std::get<1>(key) == stream) ticks = 0;
  }
  return NRT_SUCCESS;
}

int gettid_now() { return static_cast<int>(syscall(SYS_gettid)); }

int thread_count() { return nccom_test::thread_count(); }

std::string runtime_log() {
  std::string text(static_cast<size_t>(nrt_emu_log_snapshot(nullptr, 0)), '\0');
  nrt_emu_log_snapshot(text.data(), text.size() + 1);
  return text;
}

std::string thread_name(int tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

}  // namespace emu_proxy_test

namespace emu_proxy_test {

ScopedEnv::ScopedEnv(const char* name, const char* value) : name_(name) {
  if (const char* old = std::getenv(name)) {
    had_ = true;
    old_ = old;
  }
  if (value != nullptr) {
    setenv(name, value, 1);
  } else {
    unsetenv(name);
  }
}

ScopedEnv::~ScopedEnv() {
  if (had_) {
    setenv(name_.c_str(), old_.c_str(), 1);
  } else {
    unsetenv(name_.c_str());
  }
}

}  // namespace emu_proxy_test
