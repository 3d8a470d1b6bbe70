#include "net/probe.h"

#include "core/context.h"
#include "log/log.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace nccom::net {
namespace {

constexpr int kReportFd = 3;  // the probe's channel to its parent

// "getProperties 3" -> "getProperties(3)".
std::string call_text(const std::string& call) {
  const std::size_t space = call.find(' ');
  if (space == std::string::npos) return call + "()";
  return call.substr(0, space) + "(" + call.substr(space + 1) + ")";
}

std::string signal_text(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return "signal " + std::to_string(sig) +
         (abbrev != nullptr ? std::string(" (SIG") + abbrev + ")" : std::string());
}

bool same_dir(const std::filesystem::path& a, const std::filesystem::path& b) {
  std::error_code ea, eb;
  const auto ca = std::filesystem::canonical(a, ea);
  const auto cb = std::filesystem::canonical(b, eb);
  return !ea && !eb && ca == cb;
}

}  // namespace

std::filesystem::path probe_program() {
  const std::filesystem::path own = core::own_directory();
  if (own.empty()) return {};
  const std::filesystem::path program = own / "nccom" / "nccom-net-probe";
  return access(program.c_str(), X_OK) == 0 ? program : std::filesystem::path();
}

bool is_own_plugin(const std::string& file) {
  if (file.empty()) return false;
  const std::filesystem::path dir = std::filesystem::path(file).parent_path();
  const std::filesystem::path own = core::own_directory();
  return !own.empty() && (same_dir(dir, own) || same_dir(dir, own / "nccom"));
}

namespace {

// Starts the probe program on `file`, its report on `report_fd`; the pid,
// or -1 with the errno.
pid_t spawn_probe(const std::filesystem::path& program, const std::string& file, Layout layout,
                  int report_fd, int& error) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, report_fd, kReportFd);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::string layout_arg = to_string(layout);
  std::string program_arg = program.string();
  std::string file_arg = file;
  std::vector<char*> argv = {program_arg.data(), layout_arg.data(), file_arg.data(), nullptr};
  pid_t pid = -1;
  error = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return error == 0 ? pid : -1;
}

// The child's report, until it closes the pipe (exit or crash) or the bound
// passes (`timed_out`).
std::string read_report(int fd, std::chrono::milliseconds bound, bool& timed_out) {
  std::string report;
  const auto deadline = std::chrono::steady_clock::now() + bound;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      return report;
    }
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) return report;
    if (ready <= 0) continue;
    char buf[512];
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return report;
    report.append(buf, static_cast<std::size_t>(n));
  }
}

// What the report's lines say: the last call begun, whether the probe got
// through every call, whether it could bind the plugin at all.
struct Report {
  std::string last_call;
  bool done = false;
  bool unbound = false;
};

Report parse_report(const std::string& report) {
  Report r;
  for (std::size_t at = 0; at < report.size();) {
    std::size_t end = report.find('\n', at);
    if (end == std::string::npos) end = report.size();
    const std::string line = report.substr(at, end - at);
    if (line.rfind("call ", 0) == 0) r.last_call = line.substr(5);
    if (line == "done") r.done = true;
    if (line.rfind("unbound", 0) == 0) r.unbound = true;
    at = end + 1;
  }
  return r;
}

}  // namespace

Status probe_discovery(const std::filesystem::path& program, const std::string& file, Layout layout,
                       std::chrono::milliseconds bound) {
  const std::string who = "net.probe of " + file;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    NCCOM_INFO(log::kNet | log::kInit, "NET/Plugin: %s not run: pipe: %s", who.c_str(),
               std::strerror(errno));
    return {};
  }
  int spawn_error = 0;
  const pid_t pid = spawn_probe(program, file, layout, fds[1], spawn_error);
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    NCCOM_INFO(log::kNet | log::kInit, "NET/Plugin: %s not run: cannot start %s: %s", who.c_str(),
               program.c_str(), std::strerror(spawn_error));
    return {};
  }
  bool timed_out = false;
  const Report r = parse_report(read_report(fds[0], bound, timed_out));
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  pid_t waited;
  do {
    waited = waitpid(pid, &status, 0);
  } while (waited < 0 && errno == EINTR);

  const std::string where = " in a probe process (" + program.string() + ")";
  const std::string call =
      r.last_call.empty() ? "loading (its constructors)" : call_text(r.last_call);
  if (timed_out) {
    return make_error(NRT_FAILURE, "its " + call + " did not return within " +
                                       std::to_string(bound.count()) + " ms" + where +
                                       " (net.probe_timeout_ms)");
  }
  if (r.done) return {};
  if (waited != pid) {  // reaped elsewhere (SIGCHLD ignored): the outcome is unknown
    NCCOM_INFO(log::kNet | log::kInit, "NET/Plugin: %s: outcome unknown (%s)", who.c_str(),
               std::strerror(errno));
    return {};
  }
  if (WIFSIGNALED(status)) {
    return make_error(NRT_FAILURE,
                      "its " + call + " crashed with " + signal_text(WTERMSIG(status)) + where);
  }
  if (r.unbound || r.last_call.empty()) {
    NCCOM_INFO(log::kNet | log::kInit, "NET/Plugin: %s not run: the probe could not bind it",
               who.c_str());
    return {};
  }
  return make_error(NRT_FAILURE, "its " + call + " ended the process (exit status " +
                                     std::to_string(WEXITSTATUS(status)) + ")" + where);
}

}  // namespace nccom::net
