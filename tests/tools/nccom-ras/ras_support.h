// What the health end-to-end suites share: a running nccom-test job with its
// own health client port, nccom-ras asked about it, and the pids the report
// gives for each rank.
#pragma once

#include "build_paths.h"
#include "child_process.h"

#include <signal.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace ras_test {

using Clock = std::chrono::steady_clock;

inline const std::string kTool = std::string(NCCOM_BUILD_DIR) + "/bin/nccom-test";
inline const std::string kRas = std::string(NCCOM_BUILD_DIR) + "/bin/nccom-ras";
inline const std::string kShippedConfig = std::string(NCCOM_SOURCE_DIR) + "/config/nccom.toml";

// Keep-alives every 400 ms, unresponsive after 5 of them (2 s); a process's
// answer to a query within 300 ms.
inline constexpr int kKeepAliveMs = 400;
inline constexpr int kTimeoutFactor = 5;
inline constexpr int kKeepAliveTimeoutMs = kKeepAliveMs * kTimeoutFactor;

// nccom-ras against whatever job answers on `port` of 127.0.0.1.
// `env` adds to (or overrides) nccom-ras's environment.
inline nccom_test::ChildResult ras_at(int port, std::vector<std::string> args = {},
                                      std::map<std::string, std::string> env = {}) {
  std::vector<std::string> all = {"-p", std::to_string(port)};
  all.insert(all.end(), args.begin(), args.end());
  env.try_emplace("NCCOM_RAS_ADDR", "");
  env.try_emplace("NCCL_RAS_ADDR", "");
  return nccom_test::run_child(kRas, all, env);
}

// A job that runs until the test lets it end: rank 0 waits 25 ms before
// each call while the gate's file exists, so a job of N calls lasts at least
// N x 25 ms, and ends at full speed once open() removes the file. The test
// then waits for the job's real end instead of for a guess at its length.
class Gate {
 public:
  Gate() : path_(dir_.path() + "/held") { EXPECT_TRUE(std::ofstream(path_).good()) << path_; }
  // The variables that hold a job at the gate, added to `more`.
  std::map<std::string, std::string> env(std::map<std::string, std::string> more = {}) const {
    more["NCCOM_TEST_DEBUG_SLOW_RANK"] = "0:25";
    more["NCCOM_TEST_DEBUG_SLOW_WHILE"] = path_;
    return more;
  }
  void open() { std::remove(path_.c_str()); }

 private:
  nccom_test::TempDir dir_;
  std::string path_;
};

// 4 ranks on 2 hosts, 2000 checked all-reduces: held at a Gate, at least
// 50 s; after it, a few seconds even under AddressSanitizer.
inline const std::vector<std::string> kHeldAllReduce = {
    "-r", "4", "-N", "2", "-b", "8", "-e", "8", "-n", "2000", "-w", "1", "--check", "allr"};

class Job {
 public:
  Job(const std::vector<std::string>& args, std::map<std::string, std::string> extra = {}) {
    std::map<std::string, std::string> env = {
        {"NCCOM_CONFIG", kShippedConfig},
        {"NCCL_DEBUG", "WARN"},
        {"NCCOM_RAS_ADDR", "127.0.0.1:" + std::to_string(port_.port())},
        {"NCCOM_HEALTH_KEEPALIVE_MS", std::to_string(kKeepAliveMs)},
        {"NCCOM_HEALTH_TIMEOUT_FACTOR", std::to_string(kTimeoutFactor)},
        {"NCCOM_HEALTH_QUERY_TIMEOUT_MS", "300"},
    };
    for (auto& [k, v] : extra) env[k] = v;
    child_ = nccom_test::start_child(kTool, args, env);
  }
  ~Job() {
    if (!finished_ && child_.pid > 0) {
      for (int pid : stopped_) ::kill(pid, SIGCONT);
      ::kill(child_.pid, SIGTERM);
      nccom_test::finish_child(child_);
    }
  }
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  int port() const { return port_.port(); }
  // nccom-ras against this job (text unless args say otherwise).
  nccom_test::ChildResult ras(std::vector<std::string> args = {},
                              std::map<std::string, std::string> env = {}) const {
    return ras_at(port_.port(), std::move(args), std::move(env));
  }
  void stop(int pid) {
    stopped_.push_back(pid);
    ::kill(pid, SIGSTOP);
  }
  void resume(int pid) { ::kill(pid, SIGCONT); }
  nccom_test::ChildResult finish() {
    finished_ = true;
    return nccom_test::finish_child(child_);
  }
  // Ends a job that would run on (SIGTERM to its launcher) and returns what
  // it printed.
  nccom_test::ChildResult end() {
    ::kill(child_.pid, SIGTERM);
    return finish();
  }

 private:
  nccom_test::LoopbackPort port_;
  nccom_test::RunningChild child_;
  std::vector<int> stopped_;
  bool finished_ = false;
};

// The pid nccom-ras --json gives for `rank` of the (one) communicator.
inline std::optional<int> pid_of(const std::string& json, int rank) {
  const std::regex re("\\{\"rank\":" + std::to_string(rank) +
                      ",\"state\":\"[a-z]+\",\"process\":\\{\"host\":\"[^\"]*\",\"pid\":([0-9]+)");
  std::smatch m;
  if (!std::regex_search(json, m, re)) return std::nullopt;
  return std::stoi(m[1]);
}

// The pids nccom-ras --json gives for ranks 0 .. ranks-1 (absent ones left out).
inline std::set<int> pids_of(const std::string& json, int ranks) {
  std::set<int> out;
  for (int r = 0; r < ranks; ++r) {
    if (auto pid = pid_of(json, r)) out.insert(*pid);
  }
  return out;
}

// The most proxy executions any rank completed, from nccom-ras --json.
inline long completed_max(const std::string& json) {
  const std::regex re("\"completed_max\":([0-9]+)");
  std::smatch m;
  return std::regex_search(json, m, re) ? std::stol(m[1]) : -1;
}

inline int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Asks `probe` until it returns true or `limit` passes (the job runs on its
// own; this only looks at it, a little apart).
inline bool eventually(const std::function<bool()>& probe, std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    if (probe()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return probe();
}

// Waits until every one of `ranks` runs and the job completed `executions`;
// returns the last JSON report.
inline std::string running(Job& job, int ranks, long executions, std::chrono::milliseconds limit) {
  std::string json;
  eventually(
      [&] {
        auto r = job.ras({"--json"});
        json = r.out;
        return r.exit_code == 0 && pid_of(json, ranks - 1) && completed_max(json) >= executions;
      },
      limit);
  return json;
}

// Stops `pid` and asks nccom-ras until it names the process unresponsive;
// returns the milliseconds that took, or -1 past `limit` (`report` holds
// the last answer either way).
inline long stop_until_unresponsive(Job& job, int pid, std::string& report,
                                    std::chrono::milliseconds limit) {
  const std::string named = "UNRESPONSIVE: pid " + std::to_string(pid);
  const auto t0 = Clock::now();
  job.stop(pid);
  const bool seen = eventually(
      [&] {
        report = job.ras({"--timeout-ms", "300"}).out;
        return report.find(named) != std::string::npos;
      },
      limit);
  if (!seen) return -1;
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
}

// A job ended by health.stall_fail_s while `victim` was stopped: it exits
// 1, every stall failure names the stopped process (as the peer waited on,
// or as the communicator's rank that does not answer), and nccom-test's
// failure line carries the health view naming it.
inline void expect_stall_failure_naming(const nccom_test::ChildResult& done, int victim) {
  const std::string all = done.out + done.err;
  const std::string head = all.substr(0, 8000);
  EXPECT_EQ(done.exit_code, 1) << head;
  const std::string who = "pid " + std::to_string(victim) + ")";
  // The ranks' own lines; the launcher's last line is its summary, whose
  // cause is shortened to fit its 200 bytes.
  std::string err = done.err;
  while (!err.empty() && err.back() == '\n') err.pop_back();
  const std::string ranks = done.out + err.substr(0, err.rfind('\n') + 1);
  EXPECT_EQ(err.compare(err.rfind('\n') + 1, 16, "nccom-test: rank"), 0) << head;
  int failures = 0;
  for (std::size_t at = ranks.find("(health.stall_fail_s): "); at != std::string::npos;
       at = ranks.find("(health.stall_fail_s): ", at + 1)) {
    const std::string line = ranks.substr(at, ranks.find('\n', at) - at);
    EXPECT_TRUE(line.find(who + ": unresponsive") != std::string::npos ||
                line.find(who + " is unresponsive") != std::string::npos)
        << line;
    ++failures;
  }
  EXPECT_GE(failures, 1) << head;
  EXPECT_NE(all.find("the health service says: UNRESPONSIVE: pid " + std::to_string(victim)),
            std::string::npos)
      << head;
}

}  // namespace ras_test
