#include "proxy/scheduler.h"

#include "log/log.h"

#include <chrono>
#include <string>

namespace nccom::proxy {
namespace {

uint64_t steady_ms() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

std::string where(uint32_t stream, uint32_t block) {
  return "stream " + std::to_string(stream) + ", basic block " + std::to_string(block);
}

}  // namespace

Scheduler::Scheduler(ProxyTransport& transport, SchedulerSettings settings)
    : transport_(transport), settings_(std::move(settings)) {
  if (!settings_.now_ms) settings_.now_ms = steady_ms;
}

Status Scheduler::check_stream(uint32_t stream, const char* call) const {
  if (stream < kMaxStreams) return {};
  return make_error(NRT_INVALID, std::string(call) + ": stream " + std::to_string(stream) +
                                     " is out of range (0.." + std::to_string(kMaxStreams - 1) +
                                     ")");
}

Status Scheduler::start(uint32_t stream, uint32_t basic_block, const BlockFifos& fifos) {
  if (Status s = check_stream(stream, "neuronStartNetworkProxy"); !s) return s;
  const std::string at = where(stream, basic_block);
  if (Status s = validate_block(fifos, at.c_str()); !s) return s;

  // Both ops are built before either is registered: all or nothing.
  auto send = transport_.make_op(Direction::Send, fifos, stream, basic_block);
  if (!send) return send.take_error();
  auto recv = transport_.make_op(Direction::Recv, fifos, stream, basic_block);
  if (!recv) return recv.take_error();

  Stream& s = streams_[stream];
  std::lock_guard lock(s.mu);
  auto& parked = s.blocks[basic_block];
  parked.push_back(Parked{std::move(*send), false});
  parked.push_back(Parked{std::move(*recv), false});
  NCCOM_TRACE(log::kProxy, "proxy: registered %s (%d ops, %d src, %d dest entries)", at.c_str(),
              fifos.ops_n, fifos.src_n, fifos.dst_n);
  return {};
}

bool Scheduler::any_running(const Stream& s) const {
  if (s.current == kNoBlock) return false;
  auto it = s.blocks.find(s.current);
  if (it == s.blocks.end()) return false;
  for (const Parked& p : it->second) {
    if (p.running) return true;
  }
  return false;
}

Result<Progress> Scheduler::progress(uint32_t stream, uint32_t basic_block) {
  if (Status st = check_stream(stream, "neuronNetworkProxyProgress"); !st) return st.take_error();
  Stream& s = streams_[stream];
  std::lock_guard lock(s.mu);
  if (s.failed) return *s.failed;

  // As ncclProxyProgress: with nothing running, load the requested block;
  // otherwise remember it as the next one.
  if (!any_running(s)) {
    auto it = s.blocks.find(basic_block);
    if (it == s.blocks.end()) {
      s.current = kNoBlock;
    } else {
      for (Parked& p : it->second) p.running = true;
      s.current = basic_block;
      s.pending = kNoBlock;
      s.last_progress_ms = settings_.now_ms();
      s.described = false;
      if (settings_.watcher) settings_.watcher->began(stream, basic_block, s.last_progress_ms);
    }
  } else if (basic_block != s.current) {
    s.pending = basic_block;
  }
  if (s.current == kNoBlock) return Progress{true, true};  // nothing registered for it

  // As ncclProxyProgressOps: one step of every running op; finished ones are
  // re-armed and parked for the block's next execution.
  Progress out;
  out.idle = true;
  bool moved = false;
  for (Parked& p : s.blocks[s.current]) {
    if (!p.running) continue;
    auto tick = p.op->progress();
    if (!tick) return fail(s, stream, in_context(tick.take_error(), where(stream, s.current)));
    out.idle = out.idle && tick->idle;
    moved = moved || !tick->idle || tick->execution_done;
    if (tick->execution_done) {
      p.running = false;
      if (Status r = p.op->rearm(); !r)
        return fail(s, stream, in_context(r.take_error(), where(stream, s.current)));
    }
  }
  out.done = !any_running(s);
  const bool finished = out.done;
  // Not done while another block waits to be loaded (as ncclProxyProgress).
  if (out.done && s.pending != kNoBlock) out = Progress{false, false};
  if (settings_.watcher) report(s, stream, moved || finished, finished);
  if (s.failed) return *s.failed;
  return out;
}

Error Scheduler::fail(Stream& s, uint32_t stream, Error e) {
  NCCOM_WARN("proxy: %s", e.message.c_str());
  if (settings_.watcher) settings_.watcher->failed(stream, e.message);
  s.failed = e;
  return e;
}

void Scheduler::report(Stream& s, uint32_t stream, bool moved, bool finished) {
  ProgressSink& watcher = *settings_.watcher;
  if (finished) {
    watcher.completed(stream);
    return;
  }
  const uint64_t now = settings_.now_ms();
  if (moved) {
    s.last_progress_ms = now;
    watcher.moved(stream, now, s.described);
    s.described = false;
    return;
  }
  // Without progress for a while: say once what the running ops wait on.
  if (!s.described && now - s.last_progress_ms >= kDescribeAfterMs) {
    s.described = true;
    StallDescription what;
    for (const Parked& p : s.blocks[s.current]) {
      if (!p.running) continue;
      if (what.target.peer < 0) what.target = p.op->waiting_on();
      what.ops += what.ops.empty() ? "" : "; ";
      what.ops += p.op->describe();
    }
    watcher.stalled(stream, std::move(what));
  }
  if (std::optional<std::string> verdict = watcher.verdict(stream)) {
    fail(s, stream, make_error(NRT_TIMEOUT, std::move(*verdict)));
  }
}

Status Scheduler::stop(uint32_t stream) {
  if (Status st = check_stream(stream, "neuronStopNetworkProxy"); !st) return st;
  Stream& s = streams_[stream];
  std::lock_guard lock(s.mu);
  s.blocks.clear();  // releases every op (and with it its plugin requests)
  s.current = kNoBlock;
  s.pending = kNoBlock;
  s.failed.reset();
  s.described = false;
  if (settings_.watcher) settings_.watcher->stopped(stream);
  return {};
}

size_t Scheduler::registered_ops(uint32_t stream) const {
  if (stream >= kMaxStreams) return 0;
  const Stream& s = streams_[stream];
  std::lock_guard lock(s.mu);
  size_t n = 0;
  for (const auto& [bb, ops] : s.blocks) n += ops.size();
  return n;
}

}  // namespace nccom::proxy
