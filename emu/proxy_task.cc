#include "proxy_task.h"

#include "bell.h"
#include "runtime_log.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <utility>

namespace nrt_emu::proxy {
namespace {

constexpr uint32_t kTriggerArmed = 0xFFFFFFFFu;
constexpr int kTaskTypeNetwork = 1;  // libnrt's task_type: UNKNOWN=0, NETWORK=1, BARRIER=2

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char text[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(text, sizeof text, fmt, args);
  va_end(args);
  return text;
}

}  // namespace

const char* run_state_name(nrt_emu_task_run_state_t state) {
  switch (state) {
    case NRT_EMU_TASK_INIT: return "INIT";
    case NRT_EMU_TASK_PROGRESSING: return "PROGRESSING";
    case NRT_EMU_TASK_WAITING_DEVICE_TRIGGER: return "WAITING_DEVICE_TRIGGER";
    case NRT_EMU_TASK_IDLE: return "IDLE";
    case NRT_EMU_TASK_DONE: return "DONE";
  }
  return "UNKNOWN";
}

// ---- Status ----------------------------------------------------------------

Status::Status(std::string name, int nec_dev, int gid)
    : name_(std::move(name)), nec_dev_(nec_dev), gid_(gid) {}

void Status::finish(NRT_STATUS rc, std::string why, std::string cause) {
  {
    std::lock_guard lock(mutex_);
    if (finished_) return;
    finished_ = true;
    rc_ = rc;
    why_ = std::move(why);
    cause_ = std::move(cause);
    state_.store(NRT_EMU_TASK_DONE);
  }
  cv_.notify_all();
  bell::ring_local();  // a device loop waiting for the task
}

NRT_STATUS Status::wait(uint32_t timeout_ms) {
  std::unique_lock lock(mutex_);
  const bool done =
      cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [this] { return finished_; });
  if (!done) {
    message_ = format(
        "[nec_dev %d gid %d] Timeout exceeded: Waiting on proxy task type %d (%s, "
        "run state %s): %u.%03u sec",
        nec_dev_, gid_, kTaskTypeNetwork, name_.c_str(), run_state_name(state_.load()),
        timeout_ms / 1000, timeout_ms % 1000);
    log::message(log::Level::Error, "%s", message_.c_str());
    reason_ = message_;
    return NRT_TIMEOUT;
  }
  if (rc_ != NRT_SUCCESS) {
    const std::string logged =
        format("[nec_dev %d gid %d] Proxy failed to execute task, status = %d (%s): %s", nec_dev_,
               gid_, static_cast<int>(rc_), name_.c_str(), why_.c_str());
    log::message(log::Level::Error, "%s", logged.c_str());
    const std::string cause = cause_.empty() ? "" : ": " + cause_;
    message_ = logged + cause;
    reason_ = name_ + ": " + why_ + cause;
  } else {
    message_.clear();
    reason_.clear();
  }
  return rc_;
}

// ---- NetworkTask -------------------------------------------------------------

nccom::Status NetworkTask::validate(const nrt_emu_network_task_t& task) {
  if (task.streams == nullptr) return nccom::make_error(NRT_INVALID, "streams is NULL");
  if (task.streams_n < 1 || task.streams_n > NRT_EMU_MAX_STREAMS) {
    return nccom::make_error(
        NRT_INVALID, format("streams_n %d outside 1..%d", task.streams_n, NRT_EMU_MAX_STREAMS));
  }
  unsigned seen = 0;
  for (int i = 0; i < task.streams_n; ++i) {
    const nrt_emu_proxy_stream_t& s = task.streams[i];
    if (s.stream >= NRT_EMU_MAX_STREAMS) {
      return nccom::make_error(NRT_INVALID, format("streams[%d].stream %u outside 0..%d", i,
                                                   s.stream, NRT_EMU_MAX_STREAMS - 1));
    }
    if ((seen & (1u << s.stream)) != 0) {
      return nccom::make_error(NRT_INVALID,
                               format("streams[%d].stream %u appears twice", i, s.stream));
    }
    seen |= 1u << s.stream;
    if (s.blocks == nullptr)
      return nccom::make_error(NRT_INVALID, format("streams[%d].blocks is NULL", i));
    if (s.blocks_n < 1 || s.blocks_n > NRT_EMU_MAX_BLOCKS) {
      return nccom::make_error(NRT_INVALID, format("streams[%d].blocks_n %d outside 1..%d", i,
                                                   s.blocks_n, NRT_EMU_MAX_BLOCKS));
    }
    for (int b = 0; b < s.blocks_n; ++b) {
      const nrt_emu_proxy_block_t& blk = s.blocks[b];
      if (blk.ops == nullptr || blk.src == nullptr || blk.dst == nullptr) {
        return nccom::make_error(
            NRT_INVALID, format("streams[%d].blocks[%d] (basic block %u): a FIFO pointer is NULL",
                                i, b, blk.basic_block_id));
      }
      if (blk.ops_n < 1 || blk.src_n < 1 || blk.dst_n < 1) {
        return nccom::make_error(
            NRT_INVALID,
            format("streams[%d].blocks[%d] (basic block %u): a FIFO is empty (ops %d, src "
                   "%d, dst %d)",
                   i, b, blk.basic_block_id, blk.ops_n, blk.src_n, blk.dst_n));
      }
    }
  }
  if (task.device_gated) {
    for (int i = 0; i < task.streams_n; ++i) {
      if (task.trigger_words[i] == nullptr) {
        return nccom::make_error(NRT_INVALID,
                                 format("device-gated task: trigger_words[%d] is NULL", i));
      }
    }
  }
  return {};
}

NetworkTask::NetworkTask(const NccomProxyFns& fns, void* comm, int rank, int nec_dev,
                         const nrt_emu_network_task_t& task, std::shared_ptr<Status> status)
    : fns_(fns),
      comm_(comm),
      rank_(rank),
      nec_dev_(nec_dev),
      gated_(task.device_gated),
      skip_(task.skip),
      status_(std::move(status)),
      log_mark_(log::mark()) {
  for (int i = 0; i < task.streams_n; ++i) {
    StreamProgram s;
    s.stream = task.streams[i].stream;
    s.blocks.assign(task.streams[i].blocks, task.streams[i].blocks + task.streams[i].blocks_n);
    streams_.push_back(std::move(s));
    if (gated_) triggers_.push_back(task.trigger_words[i]);
  }
}

nrt_emu_task_run_state_t NetworkTask::set(nrt_emu_task_run_state_t state) {
  state_ = state;
  status_->publish_state(state);
  return state;
}

nrt_emu_task_run_state_t NetworkTask::step() {
  switch (state_) {
    case NRT_EMU_TASK_INIT: return init();
    case NRT_EMU_TASK_WAITING_DEVICE_TRIGGER: return wait_trigger();
    case NRT_EMU_TASK_PROGRESSING:
    case NRT_EMU_TASK_IDLE: return progress();
    case NRT_EMU_TASK_DONE: break;
  }
  log::message(log::Level::Warn, "Task shouldn't be polled after it reached a done state (%s)",
               status_->name().c_str());
  return NRT_EMU_TASK_DONE;
}

bool NetworkTask::register_blocks(StreamProgram& s, size_t from) {
  for (size_t b = from; b < s.blocks.size(); ++b) {
    nrt_emu_proxy_block_t& blk = s.blocks[b];
    const NRT_STATUS rc = fns_.start(comm_, s.stream, blk.basic_block_id, blk.ops, blk.ops_n,
                                     blk.src, blk.src_n, blk.dst, blk.dst_n);
    if (rc != NRT_SUCCESS) {
      log::message(log::Level::Error, "[nec_dev %d] failed to start network proxy ret:%d", nec_dev_,
                   static_cast<int>(rc));
      fail(rc, format("neuronStartNetworkProxy(stream %u, basic block %u) returned %d", s.stream,
                      blk.basic_block_id, static_cast<int>(rc)));
      return false;
    }
    s.started = true;
  }
  return true;
}

bool NetworkTask::stop_stream(StreamProgram& s, const char* when) {
  s.started = false;
  const NRT_STATUS rc = fns_.stop(comm_, s.stream);
  if (rc == NRT_SUCCESS) return true;
  fail(rc, format("neuronStopNetworkProxy(stream %u) %s returned %d", s.stream, when,
                  static_cast<int>(rc)));
  return false;
}

nrt_emu_task_run_state_t NetworkTask::fail(NRT_STATUS rc, std::string why) {
  // Release what this task registered so the streams start clean next time;
  // the first error is the one reported.
  for (StreamProgram& s : streams_) {
    if (!s.started) continue;
    s.started = false;
    const NRT_STATUS stop_rc = fns_.stop(comm_, s.stream);
    if (stop_rc != NRT_SUCCESS) {
      log::message(log::Level::Warn,
                   "%s: neuronStopNetworkProxy(stream %u) after a failure "
                   "returned %d",
                   status_->name().c_str(), s.stream, static_cast<int>(stop_rc));
    }
  }
  state_ = NRT_EMU_TASK_DONE;
  status_->finish(rc, std::move(why), log::nccom_cause(log_mark_));
  return NRT_EMU_TASK_DONE;
}

void NetworkTask::abandon(NRT_STATUS rc, const std::string& why) {
  state_ = NRT_EMU_TASK_DONE;
  status_->finish(rc, why);
}

nrt_emu_task_run_state_t NetworkTask::init() {
  if (skip_) {
    state_ = NRT_EMU_TASK_DONE;
    status_->finish(NRT_SUCCESS, "");
    return NRT_EMU_TASK_DONE;
  }
  for (StreamProgram& s : streams_) {
    if (!register_blocks(s, 0)) return NRT_EMU_TASK_DONE;
  }
  return set(gated_ ? NRT_EMU_TASK_WAITING_DEVICE_TRIGGER : NRT_EMU_TASK_PROGRESSING);
}

nrt_emu_task_run_state_t NetworkTask::wait_trigger() {
  for (volatile uint32_t* word : triggers_) {
    if (__atomic_load_n(word, __ATOMIC_ACQUIRE) == kTriggerArmed) return state_;
  }
  for (volatile uint32_t* word : triggers_) __atomic_store_n(word, 0u, __ATOMIC_RELEASE);
  return set(NRT_EMU_TASK_PROGRESSING);
}

nrt_emu_task_run_state_t NetworkTask::progress() {
  bool all_idle = true;
  for (StreamProgram& s : streams_) {
    if (s.finished) continue;
    const uint32_t bb = s.blocks[s.current].basic_block_id;
    if (s.switching) {
      // Stop drops every registration of the stream, so the blocks still to
      // run are registered again before the new block's first tick.
      if (!stop_stream(s, "at a basic-block switch")) return NRT_EMU_TASK_DONE;
      if (!register_blocks(s, s.current)) return NRT_EMU_TASK_DONE;
      s.switching = false;
    }
    bool idle = false;
    bool done = false;
    const NRT_STATUS rc = fns_.progress(comm_, s.stream, bb, &idle, &done);
    if (rc != NRT_SUCCESS) {
      log::message(log::Level::Error, "[nec_dev %d] ncclNetworkProxyProgress returns %d", nec_dev_,
                   static_cast<int>(rc));
      return fail(rc, format("neuronNetworkProxyProgress(stream %u, basic block %u) returned %d",
                             s.stream, bb, static_cast<int>(rc)));
    }
    if (done) {
      all_idle = false;
      if (s.current + 1 < s.blocks.size()) {
        ++s.current;
        s.switching = true;
      } else {
        if (!stop_stream(s, "at the end of the task")) return NRT_EMU_TASK_DONE;
        s.finished = true;
      }
    } else if (!idle) {
      all_idle = false;
    }
  }
  if (std::all_of(streams_.begin(), streams_.end(),
                  [](const StreamProgram& s) { return s.finished; })) {
    state_ = NRT_EMU_TASK_DONE;
    status_->finish(NRT_SUCCESS, "");
    return NRT_EMU_TASK_DONE;
  }
  return set(all_idle ? NRT_EMU_TASK_IDLE : NRT_EMU_TASK_PROGRESSING);
}

}  // namespace nrt_emu::proxy
