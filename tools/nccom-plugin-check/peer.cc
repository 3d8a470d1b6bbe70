// The driver's handle on its peer (peer.h); the server is peer_server.cc.
#include "peer.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

namespace nccom::plugin_check {
namespace {

constexpr auto kGrace = std::chrono::seconds(10);  // on top of the peer's own deadlines
constexpr int kChildFd = 3;                        // where the child finds its channel

Expected<std::pair<int, int>> socket_pair() {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return fail(std::string("socketpair: ") + strerror(errno));
  }
  return std::pair<int, int>(sv[0], sv[1]);
}

std::string self_path() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<std::size_t>(n)) : std::string();
}

}  // namespace

Expected<std::unique_ptr<Peer>> Peer::start_thread(net::Net& net,
                                                   std::chrono::milliseconds timeout) {
  auto fds = socket_pair();
  if (!fds) return fds.take_error();
  std::unique_ptr<Peer> peer(new Peer(fds->first, timeout));
  const int server_fd = fds->second;
  peer->thread_ = std::thread([&net, server_fd, timeout] {
    Channel channel(server_fd);
    serve(net, channel, timeout);
  });
  peer->description_ = "a second thread of this process";
  return peer;
}

Expected<std::unique_ptr<Peer>> Peer::start_process(const std::vector<std::string>& args,
                                                    std::chrono::milliseconds timeout) {
  const std::string exe = self_path();
  if (exe.empty()) return fail("cannot find this executable (/proc/self/exe)");
  auto fds = socket_pair();
  if (!fds) return fds.take_error();
  std::vector<std::string> words{exe, "--peer", std::to_string(kChildFd)};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);

  const int child_end = fds->second;
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return fail(std::string("fork: ") + strerror(errno));
  if (pid == 0) {  // only async-signal-safe calls until exec
    // Dies with the check's process, whatever ends it (kept across exec).
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    if (child_end == kChildFd) {
      fcntl(kChildFd, F_SETFD, 0);
    } else {
      dup2(child_end, kChildFd);  // the copy does not inherit close-on-exec
    }
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  close(child_end);
  std::unique_ptr<Peer> peer(new Peer(fds->first, timeout));
  peer->pid_ = pid;
  // The child binds and initialises the plugin, then greets: "ok <ndev>".
  peer->pending_.push_back("(start-up: bind, init, devices)");
  auto greeting = peer->reply();
  if (!greeting) {
    peer->stop();
    return fail("peer process " + std::to_string(pid) + ": " + greeting.error().reason);
  }
  peer->description_ = "process " + std::to_string(pid) + " (" + *greeting + " device(s))";
  return peer;
}

Peer::~Peer() { stop(); }

Expected<> Peer::send(const std::string& command) {
  // An answer a failed check left uncollected must not be read as this one's.
  while (!pending_.empty() && pending_.front().rfind("!", 0) != 0) {
    if (!reply()) break;
  }
  if (!pending_.empty() && pending_.front().rfind("!", 0) == 0) {
    return fail("the peer is still stuck in '" + pending_.front().substr(1) + "'");
  }
  auto sent = channel_.send_line(command);
  if (!sent) return fail(sent.error().reason + exit_status());
  pending_.push_back(command);
  return {};
}

Expected<std::string> Peer::reply() {
  if (pending_.empty()) return fail("internal: no command is waiting for a reply");
  const std::string command = pending_.front();
  if (command.rfind("!", 0) == 0)
    return fail("the peer is still stuck in '" + command.substr(1) + "'");
  const Deadline deadline(timeout_ + kGrace);
  auto line = channel_.read_line(&deadline, "the peer to answer '" + command.substr(0, 40) + "'");
  if (!line) {
    // A late answer must never be taken for the next command's: the peer
    // counts as stuck from now on.
    if (line.error().timed_out) pending_.front() = "!" + command.substr(0, 40);
    Failure f = line.take_error();
    if (!f.timed_out) f.reason += exit_status();
    return f;
  }
  pending_.erase(pending_.begin());
  const std::string& text = *line;
  const auto space = text.find(' ');
  const std::string verb = text.substr(0, space);
  const std::string rest = space == std::string::npos ? "" : text.substr(space + 1);
  if (verb == "ok") return rest;
  if (verb == "timeout") return Failure{"peer: " + rest, true};
  if (verb == "fail") return fail("peer: " + rest);
  return fail("the peer answered '" + text + "' to '" + command + "'");
}

Expected<std::string> Peer::call(const std::string& command) {
  auto sent = send(command);
  if (!sent) return sent.take_error();
  return reply();
}

bool Peer::stop() {
  if (stopped_) return true;
  stopped_ = true;
  // Answers a check did not collect (it failed half-way) come first.
  while (!pending_.empty() && pending_.front().rfind("!", 0) != 0) {
    if (!reply()) break;
  }
  bool clean = false;
  if (pending_.empty() && channel_.send_line("quit")) {
    pending_.push_back("quit");
    const Deadline deadline(std::chrono::seconds(5));
    clean = static_cast<bool>(channel_.read_line(&deadline, "the peer to quit"));
  }
  if (thread_.joinable()) {
    if (clean) {
      thread_.join();
    } else {
      thread_.detach();  // stuck in the plugin: it ends with the process
    }
  }
  if (pid_ > 0) {
    int status = 0;
    pid_t done = 0;
    for (int i = 0; i < 50 && (done = waitpid(pid_, &status, WNOHANG)) == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (done != pid_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      clean = false;
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      clean = false;
    }
    pid_ = -1;
  }
  return clean;
}

// " (the peer process was killed by SIGSEGV)", or "" while it runs.
std::string Peer::exit_status() {
  if (pid_ <= 0) return "";
  int status = 0;
  pid_t done = 0;
  for (int i = 0; i < 20 && (done = waitpid(pid_, &status, WNOHANG)) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (done != pid_) return "";
  pid_ = -1;
  if (WIFSIGNALED(status)) {
    const char* name = sigabbrev_np(WTERMSIG(status));
    return std::string(" (the peer process was killed by SIG") + (name ? name : "?") + ")";
  }
  return " (the peer process exited with status " + std::to_string(WEXITSTATUS(status)) + ")";
}

}  // namespace nccom::plugin_check
