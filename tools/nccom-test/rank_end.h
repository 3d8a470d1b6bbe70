// How a rank of nccom-test ends on a failure: its one closing line, cause
// first, with what the job's health service knows, and the runtime's own
// split of a failure into cause and context (rank_bench.h's RankBench uses them).
#pragma once

#include "launch_env.h"

#include <nrt_emu.h>

#include <string>

namespace nccom::nccomtest {

// Where this job's health service answers nccom-ras on this host, or why it
// was not found. Asked once per process (the answer is settled when the
// communicator is up: libnccom checks its port before neuronInitComm
// returns).
struct HealthPort {
  std::string host, port;  // empty port: not found
  std::string why_not;
};
const HealthPort& own_health_port();

// What the job's health service knows (nccom-ras's findings), for a failure
// message, within about 240 bytes; "" when no service of this job answers or
// it finds nothing. Bounded by about 3 s once this job's port is known.
std::string health_view();

// Ends the rank at once, without teardown (the peers may already be gone):
// "nccom-test: rank R: CAUSE (CONTEXT)", then what the health service says.
[[noreturn]] void die(const Placement& p, const std::string& cause, const std::string& context);
[[noreturn]] void die(const Placement& p, const std::string& why);

// A runtime failure as the runtime splits it: the innermost cause
// (nrt_emu_ccom_cause) and what the runtime was doing (nrt_emu_ccom_context).
struct RuntimeReason {
  std::string cause;
  std::string context;  // "" when the runtime gave none
};
RuntimeReason runtime_reason(const nrt_emu_ccom_t* c);

// CONTEXT for die(): what the rank was doing, then the runtime's context.
std::string within(const std::string& doing, const RuntimeReason& r);

// The runtime log's last line (the reason when init leaves no handle).
std::string last_log_line();

}  // namespace nccom::nccomtest
