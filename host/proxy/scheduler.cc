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
      s.warned = false;
      if (settings_.health) {
        health::StreamProgress& hp = settings_.health->stream(static_cast<int>(stream));
        hp.last_progress_ms.store(s.last_progress_ms, std::memory_order_relaxed);
        hp.began_ms.store(s.last_progress_ms, std::memory_order_relaxed);
        hp.waiting_peer.store(-1, std::memory_order_relaxed);
        hp.waiting_known.store(false, std::memory_order_relaxed);
        hp.running.store(true, std::memory_order_relaxed);
        hp.block.store(basic_block, std::memory_order_relaxed);
        hp.started.fetch_add(1, std::memory_order_release);
      }
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
    if (!tick) {
      Error e = in_context(tick.take_error(), where(stream, s.current));
      NCCOM_WARN("%s", e.message.c_str());
      note_failure(e);
      s.failed = e;
      return e;
    }
    out.idle = out.idle && tick->idle;
    moved = moved || !tick->idle || tick->execution_done;
    if (tick->execution_done) {
      p.running = false;
      if (Status r = p.op->rearm(); !r) {
        Error e = in_context(r.take_error(), where(stream, s.current));
        NCCOM_WARN("%s", e.message.c_str());
        note_failure(e);
        s.failed = e;
        return e;
      }
    }
  }
  out.done = !any_running(s);
  const bool finished = out.done;
  // Not done while another block waits to be loaded (as ncclProxyProgress).
  if (out.done && s.pending != kNoBlock) out = Progress{false, false};
  if (settings_.health) {
    publish(s, stream, moved || finished, finished);
  } else {
    watchdog(s, stream, moved || out.done);
  }
  if (s.failed) return *s.failed;
  return out;
}

void Scheduler::note_failure(const Error& e) const {
  if (settings_.health) {
    health::Registry::instance().record_error(settings_.health->hash(), settings_.health->rank(),
                                              "proxy: " + e.message);
  }
}

void Scheduler::publish(Stream& s, uint32_t stream, bool moved, bool finished) {
  health::StreamProgress& hp = settings_.health->stream(static_cast<int>(stream));
  if (finished) {
    hp.running.store(false, std::memory_order_relaxed);
    hp.completed.fetch_add(1, std::memory_order_release);
    return;
  }
  const uint64_t now = settings_.now_ms();
  if (moved) {
    s.last_progress_ms = now;
    hp.last_progress_ms.store(now, std::memory_order_relaxed);
    if (s.warned) {
      s.warned = false;
      hp.waiting_peer.store(-1, std::memory_order_relaxed);
      hp.waiting_known.store(false, std::memory_order_relaxed);
    }
    return;
  }
  // A second without progress: say once what the oldest op waits on.
  if (!s.warned && now - s.last_progress_ms >= 1000) {
    s.warned = true;
    std::string what;
    proxy::WaitTarget target;
    for (const Parked& p : s.blocks[s.current]) {
      if (!p.running) continue;
      if (target.peer < 0) target = p.op->waiting_on();
      what += what.empty() ? "" : "; ";
      what += p.op->describe();
    }
    {
      std::lock_guard lock(hp.mu);
      hp.waiting_what = std::move(what);
      hp.waiting_in = std::move(target.in);
    }
    hp.waiting_channel.store(target.channel, std::memory_order_relaxed);
    hp.waiting_peer.store(target.peer, std::memory_order_release);
    hp.waiting_known.store(true, std::memory_order_release);
  }
  if (hp.has_verdict.load(std::memory_order_acquire)) {
    std::lock_guard lock(hp.mu);
    s.failed = make_error(NRT_TIMEOUT, hp.verdict.text);
    NCCOM_WARN("proxy: %s", hp.verdict.text.c_str());
    note_failure(*s.failed);
  }
}

void Scheduler::watchdog(Stream& s, uint32_t stream, bool moved) {
  const uint64_t now = settings_.now_ms();
  if (moved) {
    s.last_progress_ms = now;
    s.warned = false;
    return;
  }
  const uint64_t stalled = now - s.last_progress_ms;
  auto positions = [&] {
    std::string text;
    for (const Parked& p : s.blocks[s.current]) {
      if (!p.running) continue;
      text += text.empty() ? "" : "; ";
      text += p.op->describe();
    }
    return text;
  };
  if (settings_.stall_warn_ms != 0 && stalled >= settings_.stall_warn_ms && !s.warned) {
    s.warned = true;
    NCCOM_WARN("proxy: %s has made no progress for %llu ms: %s", where(stream, s.current).c_str(),
               static_cast<unsigned long long>(stalled), positions().c_str());
  }
  if (settings_.stall_fail_ms != 0 && stalled >= settings_.stall_fail_ms) {
    s.failed = make_error(NRT_TIMEOUT, where(stream, s.current) + ": no progress for " +
                                           std::to_string(stalled) +
                                           " ms (proxy.stall_fail_ms): " + positions());
    // Logged once here; later ticks return the same error silently.
    NCCOM_WARN("proxy: %s", s.failed->message.c_str());
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
  s.warned = false;
  if (settings_.health) {
    health::StreamProgress& hp = settings_.health->stream(static_cast<int>(stream));
    std::lock_guard hl(hp.mu);
    hp.running.store(false);
    hp.has_verdict.store(false);
    hp.verdict = {};
  }
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
