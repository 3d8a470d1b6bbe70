#include "child_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>

extern char** environ;

namespace nccom_test {
namespace {

bool inherited(const std::string& entry) {
  return entry.rfind("LD_LIBRARY_PATH=", 0) != 0 && entry.rfind("NEURON_RT_", 0) != 0;
}

// Reads both pipes until both reach EOF, without letting either fill up.
void drain(int out_fd, int err_fd, std::string* out, std::string* err) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* sinks[2] = {out, err};
  int open_fds = 2;
  char buf[4096];
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
}

}  // namespace

RunningChild start_child(const std::string& program, const std::vector<std::string>& args,
                         const std::map<std::string, std::string>& env) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    if (inherited(*e)) env_strings.emplace_back(*e);
  }
  for (const auto& [key, value] : env) env_strings.push_back(key + "=" + value);
  std::vector<std::string> arg_strings{program};
  arg_strings.insert(arg_strings.end(), args.begin(), args.end());

  // Everything the child needs is built before fork: after it, only
  // async-signal-safe calls.
  std::vector<char*> argv, envp;
  for (auto& a : arg_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);

  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    // A test binary that dies (ctest's timeout kills it) takes its tools
    // with it: a job left running would load every test after it. SIGTERM,
    // so that nccom-test ends its ranks. The signal follows the thread that
    // forked: callers wait for their children on that thread.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    execve(program.c_str(), argv.data(), envp.data());
    static const char kMsg[] = "run_child: execve failed\n";
    (void)!write(STDERR_FILENO, kMsg, sizeof kMsg - 1);
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  RunningChild child;
  child.pid = pid;
  child.out_fd = out_pipe[0];
  child.err_fd = err_pipe[0];
  return child;
}

namespace {

// The next line of `fd` past `consumed` in `buffer` (reading into it).
std::string next_line(int fd, std::string& buffer, std::size_t& consumed,
                      std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto newline = buffer.find('\n', consumed);
    if (newline != std::string::npos) {
      std::string line = buffer.substr(consumed, newline - consumed);
      consumed = newline + 1;
      return line;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || fd < 0) return "";
    pollfd pfd{fd, POLLIN, 0};
    if (poll(&pfd, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[4096];
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      buffer.append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      return "";
    }
  }
}

}  // namespace

std::string read_line(RunningChild& child, std::chrono::milliseconds timeout) {
  return next_line(child.out_fd, child.out, child.consumed, timeout);
}

std::string read_err_line(RunningChild& child, std::chrono::milliseconds timeout) {
  return next_line(child.err_fd, child.err, child.err_consumed, timeout);
}

ChildResult finish_child(RunningChild& child) {
  ChildResult result;
  std::string rest, rest_err;
  drain(child.out_fd, child.err_fd, &rest, &rest_err);
  result.out = child.out + rest;
  result.err = child.err + rest_err;
  child.out_fd = child.err_fd = -1;
  int status = 0;
  while (waitpid(child.pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

ChildResult run_child(const std::string& program, const std::vector<std::string>& args,
                      const std::map<std::string, std::string>& env) {
  RunningChild child = start_child(program, args, env);
  return finish_child(child);
}

std::string python_json_error(const std::string& text) {
  TempDir dir;
  const std::string file = dir.path() + "/document.json";
  {
    std::ofstream out(file, std::ios::binary);
    out << text;
    if (!out) return "cannot write " + file;
  }
  const ChildResult r = run_child(
      "/usr/bin/env",
      {"python3", "-c", "import json, sys; json.load(open(sys.argv[1])); print('parsed')", file},
      {});
  if (r.exit_code == 0 && r.out == "parsed\n") return "";
  return "python3 exited with " + std::to_string(r.exit_code) + ": " + r.err;
}

std::map<std::string, std::string> parse_report(const std::string& out, const std::string& stop) {
  std::map<std::string, std::string> report;
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    const std::string line = out.substr(start, end - start);
    start = end + 1;
    if (line == stop) break;
    const size_t eq = line.find('=');
    if (eq != std::string::npos) report[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return report;
}

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern =
      std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/nccom-test-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("mkdtemp " + pattern + ": " + std::strerror(errno));
  }
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

LoopbackPort::LoopbackPort() {
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return;
  const int one = 1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
      bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port_ = ntohs(a.sin_port);
}

LoopbackPort::~LoopbackPort() {
  if (fd_ >= 0) close(fd_);
}

namespace {

int count_entries(const char* dir) {
  std::error_code ec;
  int n = 0;
  for (auto it = std::filesystem::directory_iterator(dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

}  // namespace

// Once per process (a forked child has its own runtime threads to start).
static void start_runtime_threads() {
  static std::atomic<pid_t> settled{0};
  const pid_t self = getpid();
  if (settled.load() == self) return;
  std::atomic<pid_t> tid{0};
  std::thread([&tid] { tid = static_cast<pid_t>(syscall(SYS_gettid)); }).join();
  // join() returns when the thread's stack may be reused; its /proc entry
  // goes a moment later. Bounded: a kernel that kept it would only make the
  // baseline one thread higher, which every later count shares.
  const std::string entry = "/proc/self/task/" + std::to_string(tid.load());
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  std::error_code ec;
  while (std::filesystem::exists(entry, ec) && std::chrono::steady_clock::now() < end)
    std::this_thread::yield();
  settled = self;
}

int thread_count() {
  start_runtime_threads();
  return count_entries("/proc/self/task");
}
int open_fd_count() { return count_entries("/proc/self/fd"); }

}  // namespace nccom_test
