// nccom-ras — the health view of a running nccom job.
//
// Connects to the job's client port (health.client_address, by default
// 127.0.0.1:28028; every process of a host listens there and any of them
// answers for the whole job), speaks the line protocol of docs/health.md
// (the one NVIDIA's ncclras speaks, so either client works with either
// library) and prints the report: the job's hosts and processes, the ones
// that do not answer (unresponsive or dead) and why, every communicator with
// its ranks' states, the ranks that are behind, who waits on whom, and the
// asynchronous errors.
//
// Exit status: 0 the report was printed; 1 no job answered, or the answer
// was not the protocol's; 2 a usage error.
#include "client.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>
#include <string>
#include <thread>

namespace {

struct Options {
  std::string host = "127.0.0.1";
  std::string port = "28028";
  long timeout_ms = 0;  // 0: the job's health.query_timeout_ms
  bool json = false;
  bool verbose = false;
  long watch_s = 0;  // 0: once
  int attempts = 5;
};

void usage(FILE* out) {
  std::fprintf(out,
               "usage: nccom-ras [-h HOST] [-p PORT] [-t SECONDS | --timeout-ms MS] [--json]\n"
               "                 [-v] [--watch [SECONDS]]\n"
               "Prints the health of the nccom job reachable at HOST:PORT (default: "
               "health.client_address,\n"
               "from NCCOM_RAS_ADDR or NCCL_RAS_ADDR, else 127.0.0.1:28028).\n"
               "  -h HOST          the host to ask (any host of the job)\n"
               "  -p PORT          its health client port\n"
               "  -t SECONDS       how long each process may take to answer\n"
               "  --timeout-ms MS  the same in milliseconds\n"
               "  --json           JSON instead of text (one object)\n"
               "  -v, --verbose    every rank of every communicator\n"
               "  --watch [S]      ask again every S seconds (default 2) until interrupted\n"
               "  --help           this text\n");
}

std::optional<long> number(const char* text, long lo, long hi) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi) return std::nullopt;
  return v;
}

// One report; the exit status.
int ask_once(const Options& o) {
  nccom::ras::Query q;
  q.host = o.host;
  q.port = o.port;
  q.timeout_ms = o.timeout_ms;
  q.json = o.json;
  q.verbose = o.verbose;
  q.attempts = o.attempts;
  const nccom::ras::Answer a = nccom::ras::ask(q);
  if (!a.notes.empty()) std::fprintf(stderr, "%s", a.notes.c_str());
  if (!a.ok) {
    std::fprintf(stderr, "nccom-ras: %s\n", a.error.c_str());
    return 1;
  }
  std::fwrite(a.report.data(), 1, a.report.size(), stdout);
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  {
    nccom::ras::Query q;
    std::string error;
    if (!nccom::ras::address_from_env(q, error)) {
      std::fprintf(stderr, "nccom-ras: %s\n", error.c_str());
      return 2;
    }
    o.host = q.host;
    o.port = q.port;
  }
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* what) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "nccom-ras: %s needs %s\n", a.c_str(), what);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "-h" || a == "--host") {
      o.host = value("a host");
    } else if (a == "-p" || a == "--port") {
      const char* p = value("a port");
      if (!number(p, 1, 65535)) {
        std::fprintf(stderr, "nccom-ras: port \"%s\" is not 1..65535\n", p);
        return 2;
      }
      o.port = p;
    } else if (a == "-t" || a == "--timeout") {
      const char* t = value("seconds");
      auto v = number(t, 1, 600);
      if (!v) {
        std::fprintf(stderr, "nccom-ras: timeout \"%s\" is not 1..600 seconds\n", t);
        return 2;
      }
      o.timeout_ms = *v * 1000;
    } else if (a == "--timeout-ms") {
      const char* t = value("milliseconds");
      auto v = number(t, 1, 600000);
      if (!v) {
        std::fprintf(stderr, "nccom-ras: timeout \"%s\" is not 1..600000 ms\n", t);
        return 2;
      }
      o.timeout_ms = *v;
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "-v" || a == "--verbose") {
      o.verbose = true;
    } else if (a == "--watch") {
      o.watch_s = 2;
      if (i + 1 < argc && argv[i + 1][0] != '-') {
        auto v = number(argv[++i], 1, 3600);
        if (!v) {
          std::fprintf(stderr, "nccom-ras: --watch \"%s\" is not 1..3600 seconds\n", argv[i]);
          return 2;
        }
        o.watch_s = *v;
      }
    } else if (a == "--help") {
      usage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "nccom-ras: unknown argument \"%s\"\n", a.c_str());
      usage(stderr);
      return 2;
    }
  }
  if (o.watch_s == 0) return ask_once(o);
  for (;;) {
    const std::time_t now = std::time(nullptr);
    char stamp[64];
    std::strftime(stamp, sizeof stamp, "%F %T", std::localtime(&now));
    if (!o.json) std::printf("=== %s ===\n", stamp);
    ask_once(o);
    std::this_thread::sleep_for(std::chrono::seconds(o.watch_s));
  }
}
