// The local launch (see local_launcher.h and docs/tools/nccom-test.md, "Launch modes").
#include "local_launcher.h"

#include "bench.h"
#include "launch_env.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace nccom::nccomtest {
namespace {

using Clock = std::chrono::steady_clock;

// SIGTERM, SIGINT or SIGHUP to the launcher: it stops the ranks itself,
// cleans up after them, then ends by the same signal.
volatile sig_atomic_t g_stop_signal = 0;

void on_stop_signal(int sig) { g_stop_signal = sig; }

// Installs on_stop_signal for the run; the destructor puts the old
// handlers back.
class StopSignals {
 public:
  StopSignals() {
    struct sigaction act {};
    act.sa_handler = on_stop_signal;
    sigemptyset(&act.sa_mask);
    for (size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &act, &old_[i]);
  }
  ~StopSignals() {
    for (size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &old_[i], nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  static constexpr std::array<int, 3> kSignals = {SIGTERM, SIGINT, SIGHUP};
  std::array<struct sigaction, 3> old_{};
};

// The regions libnccom-net made for libfabric's shm provider in /dev/shm
// are named "nc<pid in hex>.<n>"; the provider removes them when it closes
// its endpoints, which a rank ended by a signal never does. Removes what
// the ranks of this run left.
void remove_shm_regions(const std::vector<pid_t>& pids) {
  DIR* d = opendir("/dev/shm");
  if (d == nullptr) return;
  std::vector<std::string> prefixes;
  for (pid_t pid : pids) {
    char text[32];
    std::snprintf(text, sizeof text, "nc%x.", static_cast<unsigned>(pid));
    prefixes.emplace_back(text);
  }
  while (const dirent* e = readdir(d)) {
    for (const std::string& prefix : prefixes) {
      if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0) {
        (void)unlinkat(dirfd(d), e->d_name, 0);
        break;
      }
    }
  }
  closedir(d);
}

struct Child {
  Placement place;
  pid_t pid = -1;
  int err_fd = -1;      // the rank's stderr (and, for ranks > 0, its stdout)
  std::string pending;  // an unfinished line of a rank > 0
  std::string last;     // its last non-empty line
  std::string cause;    // its own closing line ("nccom-test: rank N: …"), without the prefix
  bool running = false;
  int status = 0;
};

// The environment of rank i: ours with the rank's placement and root, its
// emulated device count, and loopback for the bootstrap and libfabric's
// tcp provider unless the user chose interfaces. Built before fork (no allocation in the child).
std::vector<std::string> child_env(const Placement& p, bool tty) {
  std::vector<std::string> env;
  bool have_ifname = false, have_fi_iface = false;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv = *e;
    const std::string name = kv.substr(0, kv.find('='));
    if (name == kChildVar || name == kTtyVar || name == kRootCommVar || name == kEmuDevicesVar) {
      continue;
    }
    if (name == kSocketIfVar || name == "NCCL_SOCKET_IFNAME") have_ifname = true;
    if (name == kFiIfaceVar) have_fi_iface = true;
    env.push_back(kv);
  }
  env.push_back(std::string(kChildVar) + "=" + encode_child(p));
  env.push_back(std::string(kRootCommVar) + "=" + p.root_comm_id);
  env.push_back(std::string(kEmuDevicesVar) + "=" + std::to_string(p.local_n));
  if (!have_ifname) env.push_back(std::string(kSocketIfVar) + "=lo");
  // libnccom-net's tcp provider too (it does not read CCOM_SOCKET_IFNAME).
  if (!have_fi_iface) env.push_back(std::string(kFiIfaceVar) + "=lo");
  if (tty) env.push_back(std::string(kTtyVar) + "=1");
  return env;
}

// Starts one rank; false (and *err) when fork or pipe fails.
bool start(Child& c, const std::string& argv0, const std::vector<std::string>& args, bool tty,
           std::string* err) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    *err = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  std::vector<std::string> env = child_env(c.place, tty);
  std::vector<char*> envp, argv;
  for (std::string& s : env) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string a0 = argv0;
  argv.push_back(a0.data());
  std::vector<std::string> copy = args;
  for (std::string& s : copy) argv.push_back(s.data());
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    *err = std::string("fork: ") + std::strerror(errno);
    close(fds[0]);
    close(fds[1]);
    return false;
  }
  if (pid == 0) {
    // A rank never outlives the launcher that started it.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    dup2(fds[1], STDERR_FILENO);
    if (c.place.rank != 0) dup2(fds[1], STDOUT_FILENO);
    execve("/proc/self/exe", argv.data(), envp.data());
    const char msg[] = "nccom-test: exec /proc/self/exe failed\n";
    (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
    _exit(127);
  }
  close(fds[1]);
  c.pid = pid;
  c.err_fd = fds[0];
  c.running = true;
  return true;
}

// Reads what a rank wrote: rank 0's bytes go to our stderr as they come
// (its progress line rewrites itself), the others' lines get a prefix.
void drain(Child& c) {
  char buf[4096];
  const ssize_t n = read(c.err_fd, buf, sizeof buf);
  if (n <= 0) {
    close(c.err_fd);
    c.err_fd = -1;
    return;
  }
  const std::string chunk(buf, static_cast<size_t>(n));
  if (c.place.rank == 0) (void)!write(STDERR_FILENO, buf, static_cast<size_t>(n));
  c.pending += chunk;
  size_t nl;
  while ((nl = c.pending.find('\n')) != std::string::npos) {
    std::string line = c.pending.substr(0, nl);
    c.pending.erase(0, nl + 1);
    if (c.place.rank != 0) std::fprintf(stderr, "[rank %d] %s\n", c.place.rank, line.c_str());
    const size_t cr = line.rfind('\r');  // a progress line's last state
    if (cr != std::string::npos) line = line.substr(cr + 1);
    // The rank's own "nccom-test: rank N: " prefix is said again in the summary.
    const std::string own = "nccom-test: rank " + std::to_string(c.place.rank) + ": ";
    if (line.rfind(own, 0) == 0) {
      line.erase(0, own.size());
      c.cause = line;
    }
    if (!line.empty()) c.last = line;
  }
  if (c.pending.size() > 65536) c.pending.erase(0, c.pending.size() - 4096);
}

void signal_running(std::vector<Child>& children, int sig) {
  for (Child& c : children) {
    if (c.running) kill(c.pid, sig);
  }
}

bool any_running(const std::vector<Child>& children) {
  for (const Child& c : children) {
    if (c.running || c.err_fd >= 0) return true;
  }
  return false;
}

}  // namespace

PortReservation::PortReservation() {
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) {
    error_ = std::string("socket: ") + std::strerror(errno);
    return;
  }
  const int one = 1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
      bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port_ = ntohs(a.sin_port);
  } else {
    error_ = std::string("binding a loopback port: ") + std::strerror(errno);
  }
}

PortReservation::~PortReservation() {
  if (fd_ >= 0) close(fd_);
}

uint64_t run_bound_ms(const Options& o) {
  const uint64_t rows = size_series(o).size() * o.ops.size();
  const uint64_t per_placement = static_cast<uint64_t>(o.warmup) + o.iters + 1 + (o.check ? 1 : 0);
  const uint64_t calls =
      rows * (2 * per_placement + combining_calls_per_row(o)) + kCallsOutsideRows + 4;
  const uint64_t cap = 7ull * 24 * 3600 * 1000;
  return calls > cap / o.timeout_ms ? cap : calls * o.timeout_ms;
}

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* abbrev = sigabbrev_np(sig);
    return "was killed by signal " + std::to_string(sig) + " (" +
           (abbrev != nullptr ? "SIG" + std::string(abbrev) : std::string("?")) + ")";
  }
  return "ended with wait status " + std::to_string(status);
}

// How long the other ranks may run on after the first failure, so that
// each can print its own cause, before they are stopped (SIGTERM, then
// SIGKILL 2 s later).
constexpr auto kStopGrace = std::chrono::milliseconds(1000);

namespace {

// How the ranks ended.
struct Outcome {
  const Child* failed = nullptr;  // the first rank that failed (not a check failure)
  bool check_failed = false;      // a rank reported wrong results
  bool timed_out = false;         // the run exceeded its bound; every rank was killed
  bool escalated = false;         // SIGTERM was not enough: SIGKILL was sent
  int stop_signal = 0;            // the launcher was told to stop by this signal
};

// Forwards the ranks' stderr and reaps them until none runs. After the
// first failure the others get kStopGrace, then SIGTERM, then SIGKILL 2 s
// later; past `deadline` every rank is killed.
Outcome supervise(std::vector<Child>& children, bool start_failed, Clock::time_point deadline) {
  Outcome out;
  Clock::time_point term_at = Clock::time_point::max(), kill_at = Clock::time_point::max();
  while (any_running(children)) {
    std::vector<pollfd> fds;
    std::vector<Child*> owners;
    for (Child& c : children) {
      if (c.err_fd >= 0) {
        fds.push_back({c.err_fd, POLLIN, 0});
        owners.push_back(&c);
      }
    }
    poll(fds.data(), fds.size(), 50);
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents != 0) drain(*owners[i]);
    }
    for (Child& c : children) {
      if (!c.running || waitpid(c.pid, &c.status, WNOHANG) != c.pid) continue;
      c.running = false;
      if (WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0) continue;
      if (WIFEXITED(c.status) && WEXITSTATUS(c.status) == kExitCheckFailed) {
        out.check_failed = true;
        continue;
      }
      if (out.failed == nullptr && !start_failed) {
        // The first rank to fail. The others get a moment to notice and
        // say why themselves (a dead peer is seen within a fraction of a
        // second) before they are stopped.
        out.failed = &c;
        term_at = Clock::now() + kStopGrace;
        kill_at = term_at + std::chrono::seconds(2);
      }
    }
    if (Clock::now() >= term_at) {
      signal_running(children, SIGTERM);
      term_at = Clock::time_point::max();
    }
    if (Clock::now() >= kill_at) {
      signal_running(children, SIGKILL);
      out.escalated = true;
    }
    if (g_stop_signal != 0 && out.stop_signal == 0) {
      // Told to stop: the ranks get SIGTERM now, SIGKILL 2 s later.
      out.stop_signal = g_stop_signal;
      signal_running(children, SIGTERM);
      term_at = Clock::time_point::max();
      kill_at = Clock::now() + std::chrono::seconds(2);
    }
    if (!out.timed_out && out.failed == nullptr && !start_failed && Clock::now() >= deadline) {
      out.timed_out = true;
      signal_running(children, SIGKILL);
    }
  }
  return out;
}

// Whether the launcher sent the signal that ended a rank: SIGTERM when it
// stopped the ranks, SIGKILL once that was not enough.
bool stopped_by_launcher(const Child& c, const Outcome& out) {
  if (!WIFSIGNALED(c.status)) return false;
  const int sig = WTERMSIG(c.status);
  return sig == SIGTERM || (sig == SIGKILL && out.escalated);
}

// A rank that failed by itself, not one the launcher stopped: it exited
// non-zero (short of wrong results), a signal the launcher did not send
// ended it, or it printed its own closing line before it was stopped (a
// rank slow to exit after its failure).
bool failed_itself(const Child& c, const Outcome& out) {
  if (c.running) return false;
  if (WIFEXITED(c.status))
    return WEXITSTATUS(c.status) != 0 && WEXITSTATUS(c.status) != kExitCheckFailed;
  return !stopped_by_launcher(c, out) || !c.cause.empty();
}

// What a rank said of its own end; short of that, the last thing it
// printed, unless a signal ended it (then that line is older than its end
// and may be about something else).
const std::string& said(const Child& c) {
  return c.cause.empty() && !WIFSIGNALED(c.status) ? c.last : c.cause;
}

// The summary: one line naming the rank whose own failure ended the run,
// and why, with the ranks that failed because it left (summary_line).
void report_failure(const std::vector<Child>& children, const Outcome& out) {
  const Child* failed = out.failed;
  // The first rank reaped may only report a peer that died first (its
  // zombie reaped later): a rank ended by a signal this launcher did not
  // send is the cause, and is named instead.
  for (const Child& c : children) {
    if (&c == failed || !WIFSIGNALED(c.status) || stopped_by_launcher(c, out)) continue;
    if (!WIFSIGNALED(failed->status)) failed = &c;
    break;
  }
  // Nor is the first rank to exit the cause when it failed because a peer
  // left: that peer is, or the one it lost in turn. Each departure came
  // before the failure that reports it, so before the first rank exited and
  // before the launcher stopped anyone: a peer the launcher stopped later
  // had left by itself (it may not have said why yet). A peer that ended
  // cleanly (status 0, or wrong results only) is no cause.
  std::vector<bool> seen(children.size(), false);
  seen[static_cast<size_t>(failed->place.rank)] = true;
  for (;;) {
    const int peer = departed_peer(said(*failed), failed->place.rank);
    if (peer < 0 || static_cast<size_t>(peer) >= children.size() || seen[peer]) break;
    const Child& left = children[static_cast<size_t>(peer)];
    if (!failed_itself(left, out) && !stopped_by_launcher(left, out)) break;
    seen[peer] = true;
    failed = &left;
  }
  std::vector<RankEnd> ends;
  for (const Child& c : children) {
    RankEnd e;
    e.rank = c.place.rank;
    e.host = c.place.host;
    e.said = said(c);
    const bool stopped = stopped_by_launcher(c, out);
    e.end = !stopped         ? describe_wait_status(c.status)
            : e.said.empty() ? "left first and was stopped before it said why"
                             : "failed and was still running when it was stopped";
    e.failed = failed_itself(c, out);
    e.stopped = stopped && !e.failed;
    if (&c == failed && !e.failed) e.failed = true;  // it left first, stopped before it said why
    e.left_for = departed_peer(e.said, c.place.rank);
    ends.push_back(std::move(e));
  }
  const std::string line = summary_line(ends, static_cast<size_t>(failed - children.data()));
  std::fprintf(stderr, "%s\n", line.c_str());
}

}  // namespace

int run_local(const Options& o, const std::string& argv0, const std::vector<std::string>& args) {
  std::string err;
  // Held until the run ends: a port only found free and released could be
  // taken by another process before rank 0 binds it (seen under ctest -j2).
  const PortReservation reserved;
  if (reserved.port() == 0) {
    std::fprintf(stderr, "nccom-test: no free loopback port for the root: %s\n",
                 reserved.error().c_str());
    return 1;
  }
  const std::string root = "127.0.0.1:" + std::to_string(reserved.port());
  // The job's own health client port (unless the user chose one), so that
  // nccom-ras and the ranks' failure messages reach this job and no other
  // job on the host. Held, like the root's, until the run ends.
  const PortReservation health_port;
  const char* ras_addr = std::getenv(kHealthAddrVar);
  const char* nccl_ras_addr = std::getenv("NCCL_RAS_ADDR");
  if ((ras_addr == nullptr || *ras_addr == '\0') &&
      (nccl_ras_addr == nullptr || *nccl_ras_addr == '\0') && health_port.port() != 0) {
    setenv(kHealthAddrVar, ("127.0.0.1:" + std::to_string(health_port.port())).c_str(), 1);
  }
  const bool tty = isatty(STDERR_FILENO) == 1;
  std::fflush(stdout);
  std::fflush(stderr);
  const StopSignals stop_signals;
  std::vector<Child> children(static_cast<size_t>(o.ranks));
  bool start_failed = false;
  for (int i = 0; i < o.ranks; ++i) {
    children[i].place = local_rank_placement(o, i, root);
    if (!start(children[i], argv0, args, tty, &err)) {
      std::fprintf(stderr, "nccom-test: starting rank %d failed: %s\n", i, err.c_str());
      signal_running(children, SIGKILL);
      start_failed = true;
      break;
    }
  }
  const uint64_t bound = run_bound_ms(o);
  const Outcome out =
      supervise(children, start_failed, Clock::now() + std::chrono::milliseconds(bound));
  std::vector<pid_t> pids;
  for (const Child& c : children) {
    if (c.pid > 0) pids.push_back(c.pid);
  }
  remove_shm_regions(pids);
  if (out.stop_signal != 0) {
    const char* abbrev = sigabbrev_np(out.stop_signal);
    std::fprintf(stderr, "nccom-test: stopped by SIG%s; stopped every rank\n",
                 abbrev != nullptr ? abbrev : "?");
    std::fflush(stderr);
    // Ends by the signal it was sent, as without the handler.
    signal(out.stop_signal, SIG_DFL);
    raise(out.stop_signal);
  }
  if (start_failed) return 1;
  if (out.timed_out) {
    std::fprintf(stderr,
                 "nccom-test: the run exceeded its bound of %.1f s (--timeout-ms %u for each of "
                 "its collective "
                 "calls); stopped every rank\n",
                 static_cast<double>(bound) / 1000, o.timeout_ms);
    return 1;
  }
  if (out.failed != nullptr) {
    report_failure(children, out);
    return 1;
  }
  return out.check_failed ? 1 : 0;
}

}  // namespace nccom::nccomtest
