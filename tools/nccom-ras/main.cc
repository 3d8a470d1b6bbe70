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
// Without -h/-p (or NCCOM_RAS_ADDR), it asks the job the host's job
// registry names (health/job_registry.h); when several jobs run it lists
// them instead, and --list lists them always.
//
// Exit status: 0 the report (or --list) was printed; 1 no job answered, the
// answer was not the protocol's, or several jobs run and none was chosen; 2 a
// usage error.
#include "client.h"
#include "health/job_registry.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Options {
  std::string host = "127.0.0.1";
  std::string port = "28028";
  long timeout_ms = 0;  // 0: the job's health.query_timeout_ms
  bool json = false;
  bool verbose = false;
  long watch_s = 0;  // 0: once
  int attempts = 5;
  bool addressed = false;  // -h, -p or NCCOM_RAS_ADDR / NCCL_RAS_ADDR chose the job
  bool list = false;
  std::string unregistered_note;  // appended to "no job answers" when the registry was empty
};

namespace registry = nccom::health::registry;

// The registry's live processes, one job per address.
struct RegisteredJob {
  std::string address;
  std::vector<int> pids;
  std::string started;  // the earliest
  std::string command;  // of its lowest pid
};

std::vector<RegisteredJob> registered_jobs(const std::string& dir) {
  std::map<std::string, RegisteredJob> by_address;
  for (const registry::Entry& e : registry::live_entries(dir)) {
    RegisteredJob& job = by_address[e.address];
    if (job.pids.empty()) {
      job.address = e.address;
      job.started = e.started;
      job.command = e.command;
    }
    job.pids.push_back(e.pid);
    if (e.started < job.started) job.started = e.started;
  }
  std::vector<RegisteredJob> out;
  for (auto& [address, job] : by_address) out.push_back(std::move(job));
  return out;
}

std::string json_text(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

void print_jobs(const std::vector<RegisteredJob>& jobs, const std::string& dir, bool json,
                FILE* out) {
  if (json) {
    std::fprintf(out, "{\"registry\":%s,\"jobs\":[", json_text(dir).c_str());
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      std::string pids;
      for (int pid : jobs[i].pids) pids += (pids.empty() ? "" : ",") + std::to_string(pid);
      std::fprintf(out, "%s{\"address\":%s,\"pids\":[%s],\"started\":%s,\"command\":%s}",
                   i == 0 ? "" : ",", json_text(jobs[i].address).c_str(), pids.c_str(),
                   json_text(jobs[i].started).c_str(), json_text(jobs[i].command).c_str());
    }
    std::fprintf(out, "]}\n");
    return;
  }
  std::fprintf(out, "%zu nccom job%s on this host (registry %s):\n", jobs.size(),
               jobs.size() == 1 ? "" : "s", dir.c_str());
  for (const RegisteredJob& job : jobs) {
    std::string pids;
    for (int pid : job.pids) pids += (pids.empty() ? "" : ", ") + std::to_string(pid);
    std::fprintf(out, "  %-21s  pid%s %s  since %s  %s\n", job.address.c_str(),
                 job.pids.size() == 1 ? "" : "s", pids.c_str(), job.started.c_str(),
                 job.command.c_str());
  }
}

// Splits "host:port" / "[v6]:port" into the query.
void aim(Options& o, const std::string& address) {
  const std::size_t colon = address.rfind(':');
  std::string host = address.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  o.host = host;
  o.port = address.substr(colon + 1);
}

void usage(FILE* out) {
  std::fprintf(out,
               "usage: nccom-ras [-h HOST] [-p PORT] [-t SECONDS | --timeout-ms MS] [--json]\n"
               "                 [-v] [--watch [SECONDS]] [--list]\n"
               "Prints the health of the nccom job reachable at HOST:PORT (default: "
               "health.client_address,\n"
               "from NCCOM_RAS_ADDR or NCCL_RAS_ADDR; else the one job the host's registry "
               "names,\n"
               "listing them when several run; else 127.0.0.1:28028).\n"
               "  -h HOST          the host to ask (any host of the job)\n"
               "  -p PORT          its health client port\n"
               "  -t SECONDS       how long each process may take to answer\n"
               "  --timeout-ms MS  the same in milliseconds\n"
               "  --json           JSON instead of text (one object)\n"
               "  -v, --verbose    every rank of every communicator\n"
               "  --watch [S]      ask again every S seconds (default 2) until interrupted\n"
               "  --list           the nccom jobs of this host (its job registry) and their ports\n"
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
int print_report(const Options& o) {
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
    std::fprintf(stderr, "nccom-ras: %s%s\n", a.error.c_str(), o.unregistered_note.c_str());
    return 1;
  }
  std::fwrite(a.report.data(), 1, a.report.size(), stdout);
  std::fflush(stdout);
  return 0;
}

// The address from NCCOM_RAS_ADDR / NCCL_RAS_ADDR; false on a bad one.
bool from_environment(Options& o) {
  nccom::ras::Query q;
  std::string error;
  if (!nccom::ras::address_from_env(q, error)) {
    std::fprintf(stderr, "nccom-ras: %s\n", error.c_str());
    return false;
  }
  o.host = q.host;
  o.port = q.port;
  for (const char* var : {"NCCOM_RAS_ADDR", "NCCL_RAS_ADDR"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0') o.addressed = true;
  }
  return true;
}

// A number option's value within [lo, hi]; exits 2 naming it otherwise.
long bounded(const char* text, long lo, long hi, const char* what, const char* unit) {
  auto v = number(text, lo, hi);
  if (!v) {
    std::fprintf(stderr, "nccom-ras: %s \"%s\" is not %ld..%ld%s\n", what, text, lo, hi, unit);
    std::exit(2);
  }
  return *v;
}

// -1: go on; otherwise the exit status (help printed, or a usage error).
int parse(int argc, char** argv, Options& o) {
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
      o.addressed = true;
    } else if (a == "-p" || a == "--port") {
      o.port = std::to_string(bounded(value("a port"), 1, 65535, "port", ""));
      o.addressed = true;
    } else if (a == "--list") {
      o.list = true;
    } else if (a == "-t" || a == "--timeout") {
      o.timeout_ms = bounded(value("seconds"), 1, 600, "timeout", " seconds") * 1000;
    } else if (a == "--timeout-ms") {
      o.timeout_ms = bounded(value("milliseconds"), 1, 600000, "timeout", " ms");
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "-v" || a == "--verbose") {
      o.verbose = true;
    } else if (a == "--watch") {
      o.watch_s = 2;
      if (i + 1 < argc && argv[i + 1][0] != '-')
        o.watch_s = bounded(argv[++i], 1, 3600, "--watch", " seconds");
    } else if (a == "--help") {
      usage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "nccom-ras: unknown argument \"%s\"\n", a.c_str());
      usage(stderr);
      return 2;
    }
  }
  return -1;
}

// --list, or no address given: the host's registry names the job (or lists
// them). -1: go on with `o` aimed; otherwise the exit status.
int from_registry(Options& o) {
  std::string why;
  const std::string dir = registry::directory(&why);
  const std::vector<RegisteredJob> jobs =
      dir.empty() ? std::vector<RegisteredJob>() : registered_jobs(dir);
  if (o.list) {
    if (dir.empty()) {
      std::fprintf(stderr, "nccom-ras: no job registry: %s\n", why.c_str());
      return 1;
    }
    print_jobs(jobs, dir, o.json, stdout);
    return 0;
  }
  if (jobs.size() == 1) {
    aim(o, jobs[0].address);
  } else if (jobs.size() > 1) {
    print_jobs(jobs, dir, o.json, stdout);
    std::fprintf(stderr, "nccom-ras: %zu jobs run on this host; ask one with -p PORT\n",
                 jobs.size());
    return 1;
  } else {
    o.unregistered_note = dir.empty()
                              ? " There is no job registry either (" + why + ")."
                              : " No running nccom job is registered in " + dir + " either.";
  }
  return -1;
}

[[noreturn]] void watch(const Options& o) {
  for (;;) {
    const std::time_t now = std::time(nullptr);
    char stamp[64];
    std::strftime(stamp, sizeof stamp, "%F %T", std::localtime(&now));
    if (!o.json) std::printf("=== %s ===\n", stamp);
    print_report(o);
    std::this_thread::sleep_for(std::chrono::seconds(o.watch_s));
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!from_environment(o)) return 2;
  if (const int code = parse(argc, argv, o); code >= 0) return code;
  if (o.list || !o.addressed) {
    if (const int code = from_registry(o); code >= 0) return code;
  }
  if (o.watch_s == 0) return print_report(o);
  watch(o);
}
