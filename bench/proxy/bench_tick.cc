// The scripted device and the timed proxy ticks of the benchmark's World.
#include "world_rank.h"

#include <sched.h>

#include <cstring>
#include <ctime>
#include <thread>

namespace nccom::bench {
namespace {

// The device releases `n` more entries (data before index).
void advance(volatile uint32_t* word, uint32_t n) {
  __atomic_store_n(word, (load(word) + n) % kLoop, __ATOMIC_RELEASE);
}
uint64_t thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

// The device: releases send slices while it holds credits (handshake grant
// + completions) and at most `window` ahead of completions, receive slices
// at most `window` ahead of arrivals (this keeps every index word within
// its 512-entry ring), the two markers as soon as they are reached.
void World::publish(Rank& k) {
  const uint32_t n = cfg_.slices;
  const uint32_t total = n + 2;
  const uint32_t credits = load(&k.sems[kSendHs]) + load(&k.sems[kSendCmp]);
  const uint32_t sent = load(&k.sems[kSendCmp]);
  uint32_t adv = 0;
  while (k.next_send < total) {
    if (k.next_send < n && (k.next_send >= credits || k.next_send - sent >= cfg_.window)) break;
    ++k.next_send;
    ++adv;
  }
  if (adv != 0) advance(&k.send_words.post_send[0].index, adv);
  const uint32_t got = load(&k.sems[kRecvCmp]);
  adv = 0;
  while (k.next_recv < total) {
    if (k.next_recv < n && k.next_recv >= got + cfg_.window) break;
    ++k.next_recv;
    ++adv;
  }
  if (adv != 0) advance(&k.recv_words.post_recv[0].index, adv);
}

// One proxy tick of rank k (timed); the device publishes first (not timed).
bool World::tick(Rank& k, RankStats* st) {
  publish(k);
  char err[1024] = "";
  bool idle = true;
  bool done = false;
  const uint64_t t0 = now_ns();
  if (k.scheduler) {
    auto p = k.scheduler->progress(0, 0);
    if (!p) return k.fail("Scheduler::progress: " + p.error().message);
    idle = p->idle;
    done = p->done;
  } else {
    done = true;
    for (int dir = 0; dir < 2; ++dir) {
      if (k.done[dir]) continue;
      int op_idle = 1, op_done = 0;
      if (t_->op_progress(k.ops[dir], &op_idle, &op_done, err, sizeof err) != NCCOM_PLUGIN_OK) {
        return k.fail(std::string("op_progress: ") + err);
      }
      idle = idle && op_idle != 0;
      if (op_done != 0) {
        if (t_->op_rearm(k.ops[dir], err, sizeof err) != NCCOM_PLUGIN_OK) {
          return k.fail(std::string("op_rearm: ") + err);
        }
        k.done[dir] = true;
      }
      done = done && k.done[dir];
    }
  }
  st->progress_ns += now_ns() - t0;
  ++st->progress_calls;
  if (done) return finish_execution(k);
  if (idle && cfg_.yield_when_idle) sched_yield();
  return true;
}

// Checks the execution that just ended and prepares the next one.
bool World::finish_execution(Rank& k) {
  const uint32_t n = cfg_.slices;
  const uint32_t want[4] = {cfg_.credits, n, kEnding, n};
  static const char* names[4] = {"send_handshake", "send_complete", "recv_handshake",
                                 "recv_complete"};
  for (int w = 0; w < 4; ++w) {
    if (load(&k.sems[w]) != want[w]) {
      return k.fail("execution " + std::to_string(k.exec) + ": " + names[w] + " is " +
                    std::to_string(load(&k.sems[w])) + ", expected " + std::to_string(want[w]));
    }
  }
  if (k.next_send != n + 2 || k.next_recv != n + 2) {
    return k.fail("execution " + std::to_string(k.exec) +
                  " ended before the device published "
                  "its last entry");
  }
  if (load(&k.send_words.post_send[0].index) != 0 || load(&k.recv_words.post_recv[0].index) != 0) {
    return k.fail("execution " + std::to_string(k.exec) + ": index words not handed back at 0");
  }
  if (cfg_.check_data) {
    for (uint32_t s = 0; s < n; ++s) {
      Stamp* got = k.stamp(k.recv_arena, s, cfg_.slice_bytes);
      const Stamp want_stamp{kStampMagic, uint32_t(k.exec), s, uint32_t(1 - k.r)};
      if (std::memcmp(got, &want_stamp, sizeof want_stamp) != 0) {
        return k.fail("execution " + std::to_string(k.exec) + ": slice " + std::to_string(s) +
                      " received a wrong stamp (exec " + std::to_string(got->exec) + ", slice " +
                      std::to_string(got->slice) + ")");
      }
      std::memset(got, kUntouched, sizeof *got);
      *k.stamp(k.send_arena, s, cfg_.slice_bytes) =
          Stamp{kStampMagic, uint32_t(k.exec + 1), s, uint32_t(k.r)};
    }
  }
  std::memset(k.sems, 0, sizeof k.sems);
  k.next_send = k.next_recv = 0;
  k.done = {false, false};
  ++k.exec;
  return true;
}

bool World::run_rank(Rank& k, uint64_t executions, uint64_t deadline_ns, RankStats* st) {
  const uint64_t target = k.exec + executions;
  for (uint64_t ticks = 0; k.exec < target; ++ticks) {
    if (!tick(k, st)) {
      abort_ = true;
      return false;
    }
    if ((ticks & 1023) == 0) {
      if (abort_.load(std::memory_order_relaxed)) return k.fail("stopped: the other rank failed");
      if (now_ns() > deadline_ns) {
        abort_ = true;
        return k.fail("time budget exceeded");
      }
    }
  }
  return true;
}

bool World::run(uint64_t executions, bool threaded, double budget_s,
                std::array<RankStats, 2>* stats) {
  if (!ok()) return false;
  *stats = {};
  abort_ = false;
  const uint64_t deadline = now_ns() + static_cast<uint64_t>(budget_s * 1e9);
  const uint64_t exec0[2] = {ranks_[0]->exec, ranks_[1]->exec};
  auto body = [&](int r) {
    const CallTimes before = thread_call_times();
    const uint64_t cpu0 = thread_cpu_ns();
    run_rank(*ranks_[r], executions, deadline, &(*stats)[r]);
    (*stats)[r].thread_cpu_ns = thread_cpu_ns() - cpu0;
    CallTimes after = thread_call_times();
    for (int c = 0; c < CallTimes::kCount; ++c) {
      (*stats)[r].net.ns[c] = after.ns[c] - before.ns[c];
      (*stats)[r].net.calls[c] = after.calls[c] - before.calls[c];
    }
  };
  if (threaded) {
    std::thread t0(body, 0), t1(body, 1);
    t0.join();
    t1.join();
  } else {
    // One thread ticks both ranks in turn; its CPU and net time go to rank 0.
    const CallTimes before = thread_call_times();
    const uint64_t cpu0 = thread_cpu_ns();
    const uint64_t target[2] = {exec0[0] + executions, exec0[1] + executions};
    for (uint64_t ticks = 0; ranks_[0]->exec < target[0] || ranks_[1]->exec < target[1]; ++ticks) {
      bool good = true;
      for (int r = 0; r < 2 && good; ++r) {
        if (ranks_[r]->exec < target[r]) good = tick(*ranks_[r], &(*stats)[r]);
      }
      if (!good) break;
      if ((ticks & 1023) == 0 && now_ns() > deadline) {
        ranks_[0]->fail("time budget exceeded");
        break;
      }
    }
    (*stats)[0].thread_cpu_ns = thread_cpu_ns() - cpu0;
    CallTimes after = thread_call_times();
    for (int c = 0; c < CallTimes::kCount; ++c) {
      (*stats)[0].net.ns[c] = after.ns[c] - before.ns[c];
      (*stats)[0].net.calls[c] = after.calls[c] - before.calls[c];
    }
  }
  for (int r = 0; r < 2; ++r) {
    (*stats)[r].executions = ranks_[r]->exec - exec0[r];
    (*stats)[r].slices_sent = (*stats)[r].executions * cfg_.slices;
  }
  // The first real failure, not the other rank's "stopped".
  for (int pass = 0; pass < 2 && error_.empty(); ++pass) {
    for (int r = 0; r < 2 && error_.empty(); ++r) {
      const std::string& e = ranks_[r]->error;
      if (!e.empty() && (pass == 1 || e.find("stopped:") == std::string::npos)) error_ = e;
    }
  }
  return ok();
}

}  // namespace nccom::bench
