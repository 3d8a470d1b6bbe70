// How a rank of nccom-test ends on a failure (see rank_end.h).
#include "rank_end.h"

#include <client.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace nccom::nccomtest {
namespace {

// The ports after the configured one that libnccom's health service moves
// to when another job holds it (host/health/port_share.h, docs/health.md).
constexpr int kHealthPortSpan = 16;

}  // namespace

// The configured address (NCCOM_RAS_ADDR, NCCL_RAS_ADDR, else nccom-ras's
// default) is this job's when the service there reports this process; a job
// whose port another job held has moved to one of the next ports, and the
// first of those that reports this process is this job's. Asked once per
// process (the answer is settled when the communicator is up: libnccom
// checks its port before neuronInitComm returns). Refused ports cost a
// connect each; a service that answers, one collection (bounded by 1 s).
const HealthPort& own_health_port() {
  static const HealthPort found = [] {
    HealthPort h;
    ras::Query q;
    if (!ras::address_from_env(q, h.why_not)) return h;
    q.json = true;
    q.attempts = 2;
    q.handshake_ms = 500;
    q.connect_ms = 300;
    q.timeout_ms = 1000;
    h.host = q.host;
    const int first = std::atoi(q.port.c_str());
    const std::string mine = "\"pid\":" + std::to_string(getpid());
    for (int port = first; port > 0 && port < first + kHealthPortSpan && port <= 65535; ++port) {
      q.port = std::to_string(port);
      const ras::Answer a = ras::ask(q);
      if (!a.ok) continue;
      for (size_t at = a.report.find(mine); at != std::string::npos;
           at = a.report.find(mine, at + 1)) {
        const char next = at + mine.size() < a.report.size() ? a.report[at + mine.size()] : ',';
        if (next == ',' || next == '}') {
          h.port = q.port;
          return h;
        }
      }
    }
    h.why_not = "no nccom-ras service of this job on " + q.host + " ports " +
                std::to_string(first) + "-" + std::to_string(first + kHealthPortSpan - 1) +
                " (another program or job holds them, or the health service is off; "
                "libnccom's WARN says which)";
    return h;
  }();
  return found;
}

// A failure ends the rank at once, without teardown: the peers may already
// be gone, and the engine fails them within their timeout naming this rank.
// What the job's health service knows (nccom-ras's findings: processes that
// do not answer, ranks waiting or behind), for a failure message; "" when no
// service of this job answers or it finds nothing. The connection may go to
// a stopped process or to a failing rank that is exiting (all of the job's
// processes on this host share the port): up to 4 connections, each
// answered within 500 ms, then one collection of at most 1 s.
std::string health_view() {
  const HealthPort& own = own_health_port();
  if (own.port.empty()) return "";
  ras::Query q;
  q.host = own.host;
  q.port = own.port;
  q.attempts = 4;
  q.handshake_ms = 500;
  q.connect_ms = 500;
  q.timeout_ms = 1000;
  const ras::Answer a = ras::ask(q);
  if (!a.ok) return "";
  // The most important findings first, within about 240 bytes: the whole
  // list is nccom-ras's to give.
  return ras::findings_line(ras::findings(a.report), 240, own.host, own.port);
}

// The rank's closing line, cause first: "nccom-test: rank R: CAUSE
// (CONTEXT)", then what the health service says. CONTEXT is what the rank
// was doing, then what the runtime was doing inside it (outer first).
[[noreturn]] void die(const Placement& p, const std::string& cause, const std::string& context) {
  const std::string health = health_view();
  std::fprintf(stderr, "nccom-test: rank %d: %s%s%s%s%s\n", p.rank, cause.c_str(),
               context.empty() ? "" : " (", context.c_str(), context.empty() ? "" : ")",
               (health.empty() ? "" : ("; the health service says: " + health)).c_str());
  std::fflush(stdout);
  std::fflush(stderr);
  // Test seam (docs/tools/nccom-test.md): this rank, having said why it
  // failed, stays until a signal ends it — a rank slow to exit after its
  // own failure, while the peers it left fail and exit first.
  if (const char* h = std::getenv("NCCOM_TEST_DEBUG_HOLD_AFTER_FAILURE");
      h != nullptr && *h != '\0' && std::atoi(h) == p.rank) {
    for (;;) pause();
  }
  _exit(1);
}

[[noreturn]] void die(const Placement& p, const std::string& why) { die(p, why, ""); }

RuntimeReason runtime_reason(const nrt_emu_ccom_t* c) {
  const char* cause = nrt_emu_ccom_cause(c);
  const char* context = nrt_emu_ccom_context(c);
  return {cause != nullptr ? cause : "", context != nullptr ? context : ""};
}

// CONTEXT for die(): what the rank was doing, then the runtime's context.
std::string within(const std::string& doing, const RuntimeReason& r) {
  return r.context.empty() ? doing : doing + ": " + r.context;
}

// The runtime log's last line (the reason when init leaves no handle).
std::string last_log_line() {
  const int n = nrt_emu_log_snapshot(nullptr, 0);
  if (n <= 0) return "no message in the runtime log";
  std::string s(static_cast<size_t>(n) + 1, '\0');
  nrt_emu_log_snapshot(s.data(), s.size());
  s.resize(static_cast<size_t>(n));
  while (!s.empty() && s.back() == '\n') s.pop_back();
  const size_t nl = s.rfind('\n');
  return nl == std::string::npos ? s : s.substr(nl + 1);
}

}  // namespace nccom::nccomtest
