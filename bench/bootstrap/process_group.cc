#include "process_group.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <thread>

extern char** environ;

namespace nccom_bench {
namespace {

bool inherited(const std::string& entry) {
  return entry.rfind("LD_LIBRARY_PATH=", 0) != 0 && entry.rfind("NEURON_RT_", 0) != 0;
}

void close_fd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

}  // namespace

ProcessGroup::~ProcessGroup() {
  kill_all();
  for (auto& c : children_) {
    close_fd(c.in_fd);
    close_fd(c.out_fd);
    close_fd(c.err_fd);
  }
}

int ProcessGroup::start(const std::string& program, const std::vector<std::string>& args,
                        const std::map<std::string, std::string>& env, std::string* error) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string key = entry.substr(0, entry.find('='));
    if (inherited(entry) && env.count(key) == 0) env_strings.push_back(entry);
  }
  for (const auto& [key, value] : env) env_strings.push_back(key + "=" + value);
  std::vector<std::string> arg_strings{program};
  arg_strings.insert(arg_strings.end(), args.begin(), args.end());
  // Built before fork: after it the child makes only async-signal-safe calls.
  std::vector<char*> argv, envp;
  for (auto& a : arg_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);

  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0) {
    *error = std::string("pipe: ") + std::strerror(errno);
    return -1;
  }
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    *error = std::string("pipe: ") + std::strerror(errno);
    close(in_pipe[0]);
    close(in_pipe[1]);
    return -1;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    *error = std::string("fork: ") + std::strerror(errno);
    for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) {
      close(fd);
    }
    return -1;
  }
  if (pid == 0) {
    dup2(in_pipe[0], STDIN_FILENO);
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    execve(program.c_str(), argv.data(), envp.data());
    static const char kMsg[] = "execve failed\n";
    (void)!write(STDERR_FILENO, kMsg, sizeof kMsg - 1);
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  Child child;
  child.pid = pid;
  child.in_fd = in_pipe[1];
  child.out_fd = out_pipe[0];
  child.err_fd = err_pipe[0];
  children_.push_back(std::move(child));
  return static_cast<int>(children_.size()) - 1;
}

bool ProcessGroup::send_line_and_close(int child, const std::string& line) {
  Child& c = children_[child];
  const std::string data = line + "\n";
  std::size_t done = 0;
  while (c.in_fd >= 0 && done < data.size()) {
    const ssize_t n = write(c.in_fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EPIPE: the child is gone; its output says why
    done += static_cast<std::size_t>(n);
  }
  close_fd(c.in_fd);
  return done == data.size();
}

bool ProcessGroup::pump_once(std::chrono::milliseconds wait) {
  std::vector<pollfd> fds;
  std::vector<std::pair<Child*, bool>> owners;  // (child, is stdout)
  for (auto& c : children_) {
    if (c.out_fd >= 0) {
      fds.push_back({c.out_fd, POLLIN, 0});
      owners.emplace_back(&c, true);
    }
    if (c.err_fd >= 0) {
      fds.push_back({c.err_fd, POLLIN, 0});
      owners.emplace_back(&c, false);
    }
  }
  if (fds.empty()) {  // only exits left to notice
    std::this_thread::sleep_for(std::min(wait, std::chrono::milliseconds(2)));
    return true;
  }
  const int ready = poll(fds.data(), fds.size(), static_cast<int>(wait.count()));
  if (ready < 0) return errno == EINTR;
  char buf[8192];
  for (std::size_t i = 0; i < fds.size(); ++i) {
    if (fds[i].revents == 0) continue;
    auto [c, is_out] = owners[i];
    const ssize_t n = read(fds[i].fd, buf, sizeof buf);
    if (n > 0) {
      (is_out ? c->output.out : c->output.err).append(buf, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      close_fd(is_out ? c->out_fd : c->err_fd);
    }
  }
  return true;
}

bool ProcessGroup::pump_until(const std::function<bool()>& done, Clock::time_point deadline) {
  while (!done()) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    if (!pump_once(std::min(left, std::chrono::milliseconds(100)))) return false;
  }
  return true;
}

void ProcessGroup::reap_exited(bool block) {
  for (auto& c : children_) {
    if (c.output.reaped) continue;
    int status = 0;
    const pid_t r = waitpid(c.pid, &status, block ? 0 : WNOHANG);
    if (r != c.pid) continue;
    c.output.reaped = true;
    if (WIFEXITED(status)) c.output.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) c.output.signal = WTERMSIG(status);
  }
}

bool ProcessGroup::finish(Clock::time_point deadline) {
  auto all_done = [this] {
    reap_exited(false);
    for (const auto& c : children_) {
      if (c.out_fd >= 0 || c.err_fd >= 0 || !c.output.reaped) return false;
    }
    return true;
  };
  const bool in_time = pump_until(all_done, deadline);
  if (!in_time) {
    kill_all();
    pump_until(all_done, Clock::now() + std::chrono::seconds(10));
  }
  return in_time;
}

void ProcessGroup::kill_all() {
  for (auto& c : children_) {
    if (!c.output.reaped) kill(c.pid, SIGKILL);  // only the children this group started
  }
  reap_exited(true);
}

std::string ProcessGroup::line_with(int child, const std::string& prefix) const {
  const std::string& out = children_[child].output.out;
  std::size_t start = 0;
  while (start < out.size()) {
    const std::size_t end = out.find('\n', start);
    if (end == std::string::npos) break;  // only whole lines count
    if (out.compare(start, prefix.size(), prefix) == 0) return out.substr(start, end - start);
    start = end + 1;
  }
  return "";
}

long raise_fd_limit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return -1;
  if (lim.rlim_cur != lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0) return -1;
  }
  return static_cast<long>(lim.rlim_cur);
}

}  // namespace nccom_bench
