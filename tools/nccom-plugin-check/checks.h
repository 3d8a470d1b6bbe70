// The conformance checks and what they share.
//
// A check is a named step with prerequisites; the suite (suite.cc) runs them
// in order, each in a process of its own (isolate.h), skips a check whose
// prerequisite did not pass, and records an Outcome for each. A check's
// process first redoes what the check needs (its prerequisites, in order:
// bind, init, ..., the connections) and then runs the check. Checks that
// need a second endpoint drive the Peer; the two connections are made by
// the connection checks and used by the checks that need them.
#pragma once

#include "guard.h"
#include "net/net.h"
#include "outcome.h"
#include "peer.h"
#include "report.h"
#include "transfer.h"

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace nccom::plugin_check {

struct Options {
  std::string plugin;
  net::Layout layout = net::Layout::kNeuron;
  std::vector<std::string> only;  // run just these checks (and what they need)
  bool two_process = false;       // the peer is another process
  bool json = false;
  bool verbose = false;
  std::chrono::milliseconds timeout{30000};  // every wait
};

// A connection, one end here and one in the peer.
struct Link {
  void* local = nullptr;         // this side's send comm (outbound) or recv comm (inbound)
  void* local_listen = nullptr;  // this side's listen comm, when it listened
  int remote = 0;                // the peer's comm id
  int remote_listen = 0;         // the peer's listen comm id, when it listened
  std::string observed;          // how the plugin's connect/accept behaved, for the report
};

struct Context {
  Options options;
  std::unique_ptr<net::Net> net;
  int ndev = 0;
  ncclNetProperties_v6_t props{};  // device 0, where every connection is made
  std::unique_ptr<Peer> peer;
  Link outbound;  // this side sends, the peer receives
  Link inbound;   // the peer sends, this side receives
  int tag = 0;    // a tag every message may carry (0 without tag support)
  // False while the prerequisites are redone: what only the report would
  // say (how connect/accept behave) is not looked into then.
  bool observe = true;

  Deadline deadline() const { return Deadline(options.timeout); }
};

struct CheckDef {
  const char* name;
  const char* description;
  // Checks that must have passed first; the check's process redoes them.
  std::vector<const char*> needs;
  Outcome (*run)(Context&);
  Group group = Group::kCollectives;
};

// In running order.
std::vector<CheckDef> setup_checks();       // bind ... connections, registration
std::vector<CheckDef> data_checks();        // transfers, tags, iflush, iread
std::vector<CheckDef> teardown_checks();    // close, fini
std::vector<CheckDef> robustness_checks();  // error paths

// Every check, in running order: first those collectives need, then the
// robustness checks.
std::vector<CheckDef> all_checks();
// What `check`'s process runs before it: its prerequisites and theirs, in
// running order.
std::vector<CheckDef> setup_of(const CheckDef& check);
// Runs every check, or with options.only those checks and what they need, each
// in a process of its own; a check whose prerequisite did not pass is
// skipped. Appends to report.checks, calling `row` after each.
void run_suite(const Options& options, Report& report,
               const std::function<void(const CheckRecord&)>& row);
// Inside a check's process: redoes `setup`, runs `check`, ends the peer.
// *milliseconds: how long the check itself took.
Outcome run_here(Context& ctx, const std::vector<CheckDef>& setup, const CheckDef& check,
                 long long* milliseconds);

// Opens a fresh connection on device 0: outbound (this side connects first,
// then the peer accepts) or inbound (this side polls accept first, then the
// peer connects). The connect/accept of an ncclNet_v4 plugin block, so
// with those the peer is set going first.
enum class Direction { kOutbound, kInbound };
Expected<Link> open_link(Context& ctx, Direction direction);
// Closes both ends; the first failure is reported, every close is tried.
Expected<> close_link(Context& ctx, Link& link, Direction direction);

// Moves messages along `link` (outbound: this side sends) and verifies them
// at the receiving end: the peer runs its plan while this side runs the
// other. Answers a note on back-pressure seen, or "".
Expected<std::string> transfer(Context& ctx, const Link& link, Direction direction,
                               const Plan& send_plan, const Plan& recv_plan);
// The sender's copy of a receiver's plan: the same messages, buffers of
// exactly the message size.
Plan sender_plan(const Plan& recv_plan);

}  // namespace nccom::plugin_check
