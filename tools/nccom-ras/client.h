// The client side of the health service's line protocol (docs/health.md):
// nccom-ras prints what it gets; nccom-test adds the findings to its own
// failure messages.
#pragma once

#include <string>
#include <vector>

namespace nccom::ras {

struct Query {
  std::string host = "127.0.0.1";
  std::string port = "28028";
  long timeout_ms = 0;  // 0: the job's health.query_timeout_ms
  bool json = false;
  bool verbose = false;
  int attempts = 5;        // connections tried when a process does not answer
  int handshake_ms = 500;  // ... within this
  int connect_ms = 2000;   // a connection must be made within this
};

struct Answer {
  bool ok = false;
  std::string report;  // ok: the report as the service wrote it
  std::string error;   // !ok: why there is none, for a person
  std::string notes;   // retries, one line each (for stderr)
};

// Sets host and port from NCCOM_RAS_ADDR or NCCL_RAS_ADDR when one is set;
// false (with `error`) when it is not host:port.
bool address_from_env(Query& q, std::string& error);

Answer ask(const Query& q);

// What a text report found wrong, one entry per finding, in the report's
// order (empty when nothing): the processes not answering, the ranks waiting
// and the ranks behind.
std::vector<std::string> findings(const std::string& text_report);

// Those findings on one line of at most about `budget` bytes: whole entries
// joined by "; ", then "; N more (nccom-ras -h HOST -p PORT)" for the rest.
std::string findings_line(const std::vector<std::string>& found, std::size_t budget,
                          const std::string& host, const std::string& port);

}  // namespace nccom::ras
