#include "client.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace nccom::ras {
namespace {

// Sends all of `text`; false on error.
bool send_text(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

enum class Read { kOk, kTimeout, kClosed, kError };

// One line (without the newline) within `ms`.
Read read_line(int fd, std::string& buffer, std::string& line, int ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  for (;;) {
    const std::size_t nl = buffer.find('\n');
    if (nl != std::string::npos) {
      line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      return Read::kOk;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) return Read::kTimeout;
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return Read::kError;
    if (r == 0) return Read::kTimeout;
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Read::kError;
    if (n == 0) return Read::kClosed;
    buffer.append(buf, static_cast<std::size_t>(n));
    if (buffer.size() > 65536) return Read::kError;
  }
}

// Connects within `limit_ms` (a network that drops SYNs must not hold the
// caller for the kernel's two minutes of retries).
int connect_to(const Query& o, std::string& error, int limit_ms) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  const int rc = ::getaddrinfo(o.host.c_str(), o.port.c_str(), &hints, &list);
  if (rc != 0) {
    error = "cannot resolve " + o.host + ":" + o.port + ": " + gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = list; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    int err = 0;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      err = errno;
      if (err == EINPROGRESS) {
        pollfd p{fd, POLLOUT, 0};
        const int r = ::poll(&p, 1, limit_ms);
        socklen_t len = sizeof err;
        err = r <= 0 ? ETIMEDOUT : 0;
        if (r > 0) ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      }
    }
    if (err != 0) {
      error = err == ETIMEDOUT
                  ? "no answer to the connection within " + std::to_string(limit_ms) + " ms"
                  : std::string(std::strerror(err));
      ::close(fd);
      fd = -1;
      continue;
    }
    const int flags = ::fcntl(fd, F_GETFL, 0);
    ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  }
  ::freeaddrinfo(list);
  return fd;
}

}  // namespace

bool address_from_env(Query& q, std::string& error) {
  for (const char* var : {"NCCOM_RAS_ADDR", "NCCL_RAS_ADDR"}) {
    const char* v = std::getenv(var);
    if (v == nullptr || *v == '\0') continue;
    const std::string text = v;
    const std::size_t colon = text.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
      error = std::string(var) + "=\"" + text + "\" is not host:port";
      return false;
    }
    std::string host = text.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']')
      host = host.substr(1, host.size() - 2);
    q.host = host;
    q.port = text.substr(colon + 1);
    return true;
  }
  return true;
}

namespace {

// One connection's outcome: the report, a reason to try a new connection
// (the process that took it was stopped or exiting), or a final error.
enum class Attempt { kReport, kRetry, kFail };

// Reads what the service sends until it closes the connection, within
// `wait_ms`; false (and `error`) past that.
bool read_to_close(int fd, std::string& report, long wait_ms, std::string& error) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      error = "the report did not arrive within " + std::to_string(wait_ms) + " ms";
      return false;
    }
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    char buf[16384];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    report.append(buf, static_cast<std::size_t>(n));
  }
}

// The handshake, the options and the request on a connected `fd`, then the
// report into `a.report`.
Attempt ask_once(int fd, const Query& o, const std::string& where, Answer& a) {
  std::string buffer;
  std::string line;
  if (!send_text(fd, "CLIENT PROTOCOL 2\n")) {
    a.notes += "the connection closed before the handshake";
    return Attempt::kRetry;
  }
  const Read r = read_line(fd, buffer, line, o.handshake_ms);
  if (r == Read::kTimeout) {
    a.notes += "the process that took the connection does not answer (stopped?)";
    return Attempt::kRetry;
  }
  if (r != Read::kOk) {
    // A process that is exiting (a job's failing ranks do) closes the
    // connections its kernel had queued for it: another may take the next.
    a.notes += "the process that took the connection closed it (exiting?)";
    return Attempt::kRetry;
  }
  if (line.rfind("SERVER PROTOCOL ", 0) != 0) {
    a.error = where + " did not answer as an nccom health service (\"" + line.substr(0, 80) + "\")";
    return Attempt::kFail;
  }
  auto command = [&](const std::string& text) {
    if (!send_text(fd, text)) return false;
    const Read got = read_line(fd, buffer, line, 5000);
    if (got == Read::kOk && line == "OK") return true;
    a.error = "\"" + text.substr(0, text.size() - 1) +
              "\" was refused: " + (got == Read::kOk ? line : std::string("no answer"));
    return false;
  };
  if ((o.timeout_ms > 0 && !command("TIMEOUT_MS " + std::to_string(o.timeout_ms) + "\n")) ||
      (o.json && !command("SET FORMAT json\n"))) {
    return Attempt::kFail;
  }
  if (!send_text(fd, o.verbose ? "VERBOSE STATUS\n" : "STATUS\n")) {
    a.error = "the connection to " + where + " closed";
    return Attempt::kFail;
  }
  std::string report = buffer;
  if (!read_to_close(fd, report, (o.timeout_ms > 0 ? o.timeout_ms : 1000) + 10000, a.error)) {
    return Attempt::kFail;
  }
  if (report.empty()) {
    a.notes += "the process that took the connection closed it without a report (exiting?)";
    return Attempt::kRetry;
  }
  a.report = std::move(report);
  return Attempt::kReport;
}

}  // namespace

Answer ask(const Query& o) {
  Answer a;
  const std::string where = o.host + ":" + o.port;
  // A stopped process also listens on the shared port and its kernel accepts
  // for it: a handshake that goes unanswered is retried on a new connection,
  // which the kernel may hand to another process of the host; so is a
  // connection closed before the report (its process was exiting).
  for (int attempt = 1; attempt <= o.attempts; ++attempt) {
    std::string error;
    const int fd = connect_to(o, error, o.connect_ms);
    if (fd < 0) {
      a.error = "no nccom job answers at " + where + " (" + error +
                "). Is a job running on this host with the health service on (health.enable), "
                "and does its health.client_address match?";
      return a;
    }
    const Attempt outcome = ask_once(fd, o, where, a);
    ::close(fd);
    if (outcome == Attempt::kReport) {
      a.ok = true;
      return a;
    }
    if (outcome == Attempt::kFail) return a;
    a.notes +=
        "; trying again (" + std::to_string(attempt) + " of " + std::to_string(o.attempts) + ")\n";
  }
  a.error = "no process of the job answered at " + where + " after " + std::to_string(o.attempts) +
            " attempts";
  return a;
}

std::vector<std::string> findings(const std::string& text) {
  std::vector<std::string> out;
  std::string section;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t nl = text.find('\n', at);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(at, nl - at);
    at = nl + 1;
    if (line.empty()) {
      section.clear();
    } else if (line[0] != ' ') {
      section = line.substr(0, line.find(':'));
    } else if (section == "Processes not answering" || section == "Waiting" ||
               section == "Behind") {
      out.push_back(line.substr(line.find_first_not_of(' ')));
    }
  }
  return out;
}

std::string findings_line(const std::vector<std::string>& found, std::size_t budget,
                          const std::string& host, const std::string& port) {
  std::string out;
  std::size_t taken = 0;
  // The first entry always (the report's most important); the others while
  // they fit.
  while (taken < found.size() && (taken == 0 || out.size() + 2 + found[taken].size() <= budget)) {
    out += (taken == 0 ? "" : "; ") + found[taken];
    ++taken;
  }
  if (taken < found.size()) {
    out += "; " + std::to_string(found.size() - taken) + " more (nccom-ras -h " + host + " -p " +
           port + ")";
  }
  return out;
}

}  // namespace nccom::ras
