#include "isolate.h"

#include "plugin_log.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace nccom::plugin_check {
namespace {

using std::chrono::milliseconds;

volatile sig_atomic_t g_interrupted = 0;

extern "C" void on_interrupt(int sig) { g_interrupted = sig; }

constexpr int kInterrupts[] = {SIGINT, SIGTERM, SIGHUP};
// How long a process sent SIGKILL may take to die, and its group to follow.
constexpr milliseconds kDeathBound{10000};

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

// The outcome on one line: "result P|F|S <milliseconds> <detail>", the
// detail with '\\' and '\n' escaped.
std::string encode_result(const Outcome& o, long long ms) {
  std::string line = "result ";
  line += o.verdict == Verdict::kPass ? 'P' : o.verdict == Verdict::kFail ? 'F' : 'S';
  line += " " + std::to_string(ms) + " ";
  for (const char c : o.detail) {
    if (c == '\\') {
      line += "\\\\";
    } else if (c == '\n') {
      line += "\\n";
    } else {
      line += c;
    }
  }
  return line + "\n";
}

bool decode_result(const std::string& text, Outcome* o, long long* ms) {
  const std::string prefix = "result ";
  const auto start = text.find(prefix);
  if (start == std::string::npos) return false;
  const auto end = text.find('\n', start);
  if (end == std::string::npos) return false;
  const std::string line = text.substr(start + prefix.size(), end - start - prefix.size());
  char verdict = 0;
  int used = 0;
  if (std::sscanf(line.c_str(), "%c %lld %n", &verdict, ms, &used) < 2) return false;
  o->verdict = verdict == 'P' ? Verdict::kPass : verdict == 'F' ? Verdict::kFail : Verdict::kSkip;
  o->detail.clear();
  for (std::size_t i = static_cast<std::size_t>(used); i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size()) {
      ++i;
      o->detail += line[i] == 'n' ? '\n' : line[i];
    } else {
      o->detail += line[i];
    }
  }
  return true;
}

std::string signal_text(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  const char* what = sigdescr_np(sig);
  return std::string("signal ") + (abbrev != nullptr ? abbrev : std::to_string(sig).c_str()) +
         (what != nullptr ? std::string(" (") + what + ")" : std::string());
}

long long ms_between(int64_t from_ns, int64_t to_ns) {
  return from_ns == 0 || to_ns < from_ns ? 0 : (to_ns - from_ns) / 1000000;
}

// Where a check's process was when it died or stuck, from its Progress.
struct Whereabouts {
  std::string call;     // "the plugin's devices", or "" outside a plugin call
  std::string context;  // "during \"null-args: devices(NULL)\"", "in its setup step init"
  long long ran_ms = 0;
  std::string ran;  // "3 ms into the check", "120 ms after its process started"
};

Whereabouts whereabouts(const Progress& p, int64_t now) {
  Whereabouts w;
  if (p.call_started_ns.load() != 0 && p.call[0] != '\0')
    w.call = std::string("the plugin's ") + p.call;
  const int64_t check_started = p.check_started_ns.load();
  if (check_started == 0) {
    w.context = std::string("in its setup step ") + (p.running[0] != '\0' ? p.running : "(start)");
    w.ran_ms = ms_between(p.started_ns.load(), now);
    w.ran = std::to_string(w.ran_ms) + " ms after its process started";
  } else {
    if (p.step[0] != '\0') w.context = std::string("during \"") + p.step + "\"";
    w.ran_ms = ms_between(check_started, now);
    w.ran = std::to_string(w.ran_ms) + " ms into the check";
  }
  return w;
}

std::string crash_text(const std::string& how, const Whereabouts& w) {
  std::string text = how;
  text += w.call.empty()
              ? " while the check's thread was in no plugin call (a thread of the plugin "
                "or of the peer, or the tool itself)"
              : " inside " + w.call;
  if (!w.context.empty()) text += ", " + w.context;
  return text + ", " + w.ran;
}

std::string hang_text(const Whereabouts& w, milliseconds bound) {
  std::string text = "hung: ";
  text += w.call.empty() ? "the check's thread made no progress" : w.call + " did not return";
  text += " within " + std::to_string(bound.count() / 1000) +
          " s (the bound: --timeout plus the larger of half of it and 5 s)";
  if (!w.context.empty()) text += ", " + w.context;
  return text + "; its process was killed " + w.ran;
}

// Waits (bounded) until `pid` has ended, without reaping it. True when it
// did.
bool wait_dead(pid_t pid, milliseconds bound) {
  const auto end = std::chrono::steady_clock::now() + bound;
  for (;;) {
    siginfo_t info{};
    if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == pid) {
      return true;
    }
    if (std::chrono::steady_clock::now() >= end) return false;
    std::this_thread::sleep_for(milliseconds(2));
  }
}

// Reaps what is left of the group `pgid` (the supervisor is its subreaper),
// bounded. Answers a note for the row when some process would not go, or "".
std::string reap_group(pid_t pgid) {
  const auto end = std::chrono::steady_clock::now() + kDeathBound;
  for (;;) {
    int status = 0;
    const pid_t done = waitpid(-pgid, &status, WNOHANG);
    if (done < 0) return "";  // none left
    if (done == 0) {
      if (std::chrono::steady_clock::now() >= end) {
        return "; a process of its group did not end within " +
               std::to_string(kDeathBound.count() / 1000) + " s of SIGKILL";
      }
      std::this_thread::sleep_for(milliseconds(2));
    }
  }
}

[[noreturn]] void child(const Options& options, Progress* progress, int out_fd,
                        const CheckDef& check, const std::vector<CheckDef>& setup, pid_t parent) {
  setpgid(0, 0);
  // Dies with the supervisor, whatever ends it.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);
  for (int sig : kInterrupts) signal(sig, SIG_DFL);
  // A crash signal ends this process with that signal, which the
  // supervisor reports, rather than running a handler inherited from the
  // tool (a sanitizer's, which exits with status 1 after its report; an
  // access it catches itself still ends that way).
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) signal(sig, SIG_DFL);
  // The supervisor's stdout carries the report (the JSON document with
  // --json): what the plugin prints goes to stderr.
  dup2(2, 1);
  guard::attach(progress);
  set_verbose(options.verbose, "plugin");
  Context ctx;
  ctx.options = options;
  long long ms = 0;
  const Outcome outcome = run_here(ctx, setup, check, &ms);
  write_all(out_fd, encode_result(outcome, ms));
  std::fflush(nullptr);
  // The plugin is never unloaded nor its objects destroyed: its threads may
  // still be inside it.
  _exit(0);
}

}  // namespace

milliseconds stall_bound(milliseconds timeout) {
  return timeout + std::max<milliseconds>(timeout / 2, std::chrono::seconds(5));
}

milliseconds process_bound(milliseconds timeout) {
  return 16 * (timeout + std::chrono::seconds(10));
}

Isolation::Isolation(const Options& options) : options_(options) {
  progress_ = guard::create_shared();
  // Orphans of a check's group (a peer whose parent was killed) are
  // reparented here, to be reaped.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  for (int sig : kInterrupts) sigaction(sig, &action, nullptr);
}

namespace {

// What the supervisor saw of a check's process while it ran.
struct Watched {
  std::string received;  // what it wrote to the result pipe
  std::string hung;      // why the supervisor ended it, if it did
  int interrupted = 0;   // the signal this program got meanwhile
  long long ran_ms = 0;  // with `hung`: how long the check ran
};

// Reads the pipe until the process is dead, stalls past the stall bound,
// outlives the cap, or this program is interrupted.
Watched watch(pid_t pid, int fd, const Progress& progress, int64_t started, milliseconds timeout) {
  const milliseconds stall = stall_bound(timeout);
  const milliseconds cap = process_bound(timeout);
  Watched w;
  bool eof = false;
  for (;;) {
    if (wait_dead(pid, milliseconds(0))) break;
    const int64_t now = guard::now_ns();
    const int64_t beat = std::max(progress.beat_ns.load(), started);
    if (g_interrupted != 0) {
      w.interrupted = g_interrupted;
      break;
    }
    if (ms_between(beat, now) > stall.count()) {
      const Whereabouts at = whereabouts(progress, now);
      w.hung = hang_text(at, stall);
      w.ran_ms = at.ran_ms;
      break;
    }
    if (ms_between(started, now) > cap.count()) {
      const Whereabouts at = whereabouts(progress, now);
      w.hung = "hung: its process was still running after " + std::to_string(cap.count() / 1000) +
               " s (the bound for one check: 16 x (--timeout + 10 s))" +
               (at.call.empty() ? "" : ", inside " + at.call) +
               (at.context.empty() ? "" : ", " + at.context) + "; killed " + at.ran;
      w.ran_ms = at.ran_ms;
      break;
    }
    pollfd p{fd, POLLIN, 0};
    if (!eof && poll(&p, 1, 100) > 0) {
      char chunk[4096];
      const ssize_t n = read(fd, chunk, sizeof chunk);
      if (n > 0) w.received.append(chunk, static_cast<std::size_t>(n));
      if (n == 0) eof = true;
    } else if (eof) {
      // The child closed its end as it exited: it is about to be dead.
      std::this_thread::sleep_for(milliseconds(2));
    }
  }
  return w;
}

// How the check's process group ended.
struct Ended {
  int status = 0;
  bool reaped = false;
  std::string leftovers;  // "; ..." when processes of its group outlived it
};

// The leader is dead, or is to be (`kill_now`): every process of its group
// goes. False (with `e.leftovers`) when the leader outlived SIGKILL.
bool stop_group(pid_t pid, bool kill_now, Ended& e) {
  if (kill_now) kill(-pid, SIGKILL);
  if (wait_dead(pid, kDeathBound)) return true;
  kill(-pid, SIGKILL);
  if (wait_dead(pid, kDeathBound)) return true;
  e.leftovers = "; its process " + std::to_string(pid) + " did not end within " +
                std::to_string(2 * kDeathBound.count() / 1000) + " s of SIGKILL";
  return false;
}

// Reaps the dead leader and what is left of its group.
void reap(pid_t pid, Ended& e) {
  kill(-pid, SIGKILL);  // the leader is a zombie: its group id is still its own
  e.reaped = waitpid(pid, &e.status, 0) == pid;
  e.leftovers = reap_group(pid);
}

// What the child wrote before it ended and is still in the pipe.
void drain(int fd, std::string& received) {
  for (;;) {
    char chunk[4096];
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 0) <= 0) break;
    const ssize_t n = read(fd, chunk, sizeof chunk);
    if (n <= 0) break;
    received.append(chunk, static_cast<std::size_t>(n));
  }
}

// The row's outcome from what was watched and how the process ended.
void settle(CheckRecord& record, const Watched& w, const Ended& e, const Whereabouts& at_death) {
  Outcome outcome;
  long long ms = 0;
  if (!w.hung.empty()) {
    record.ending = Ending::kHung;
    record.milliseconds = w.ran_ms;
    record.outcome = failed(w.hung + e.leftovers);
  } else if (decode_result(w.received, &outcome, &ms)) {
    record.outcome = outcome;
    record.milliseconds = ms;
    if (e.reaped && WIFSIGNALED(e.status)) {
      record.outcome.detail += "; then its process died of " + signal_text(WTERMSIG(e.status));
    }
    record.outcome.detail += e.leftovers;
  } else {
    record.ending = Ending::kCrashed;
    record.milliseconds = at_death.ran_ms;
    std::string how = "crashed: its process ended without a result";
    if (e.reaped && WIFSIGNALED(e.status)) {
      how = "crashed: " + signal_text(WTERMSIG(e.status));
    } else if (e.reaped && WIFEXITED(e.status)) {
      how = "crashed: its process exited with status " + std::to_string(WEXITSTATUS(e.status)) +
            " before the check ended (the plugin ended it)";
    }
    record.outcome = failed(crash_text(how, at_death) + e.leftovers);
  }
}

}  // namespace

CheckRecord Isolation::run(const CheckDef& check, const std::vector<CheckDef>& setup) {
  CheckRecord record{check.name, check.description, {}, 0, check.group, Ending::kReturned};
  if (g_interrupted != 0) {
    signal(g_interrupted, SIG_DFL);
    raise(g_interrupted);
  }
  if (progress_ == nullptr) {
    record.outcome = failed(std::string("could not start its process: mmap: ") + strerror(errno));
    return record;
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    record.outcome = failed(std::string("could not start its process: pipe: ") + strerror(errno));
    return record;
  }
  guard::reset(progress_);
  std::fflush(nullptr);  // nothing buffered may be written twice
  const pid_t parent = getpid();
  const int64_t started = guard::now_ns();
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    child(options_, progress_, fds[1], check, setup, parent);
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    record.outcome = failed(std::string("could not start its process: fork: ") + strerror(errno));
    return record;
  }
  setpgid(pid, pid);  // as the child does: no kill(-pid) can miss it

  Watched w = watch(pid, fds[0], *progress_, started, options_.timeout);
  Ended ended;
  const bool dead = stop_group(pid, !w.hung.empty() || w.interrupted != 0, ended);
  const Whereabouts at_death = whereabouts(*progress_, guard::now_ns());
  if (dead) reap(pid, ended);
  drain(fds[0], w.received);
  close(fds[0]);
  if (w.interrupted != 0) {
    // The check's processes are gone: now this one dies of the signal too.
    signal(w.interrupted, SIG_DFL);
    raise(w.interrupted);
    _exit(128 + w.interrupted);
  }
  settle(record, w, ended, at_death);
  return record;
}

}  // namespace nccom::plugin_check
