#include "init_runs.h"

#include "process_group.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <vector>

namespace nccom_bench {
namespace {

// The value of `key=` in a "k=v k=v" line, or -1.
int64_t field(const std::string& line, const std::string& key) {
  std::istringstream words(line);
  std::string word;
  while (words >> word) {
    if (word.rfind(key + "=", 0) == 0)
      return std::strtoll(word.c_str() + key.size() + 1, nullptr, 10);
  }
  return -1;
}

std::string last_line(const std::string& text) {
  std::string s = text;
  while (!s.empty() && s.back() == '\n') s.pop_back();
  const auto nl = s.rfind('\n');
  return nl == std::string::npos ? s : s.substr(nl + 1);
}

// The first line of mpirun's stderr that says something (its messages come
// framed in lines of dashes).
std::string first_message(const std::string& text) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.rfind("---", 0) != 0) return line;
  }
  return "(no message)";
}

// What a failed rank said: its error= line, else its last stderr line.
std::string describe(const ProcessGroup& group, int child, int rank) {
  const ChildOutput& out = group.output(child);
  std::string what = group.line_with(child, "error=");
  if (what.empty()) what = last_line(out.err);
  std::string status = out.signal != 0 ? "signal " + std::to_string(out.signal)
                       : out.reaped    ? "exit " + std::to_string(out.exit_code)
                                       : "still running";
  return "rank " + std::to_string(rank) + " (" + status + "): " + what;
}

// Summarises the failed ranks: how many, and the first few in full.
std::string summarise(const std::vector<std::string>& failures, int nranks) {
  std::string s = std::to_string(failures.size()) + "/" + std::to_string(nranks) + " ranks failed";
  for (std::size_t i = 0; i < failures.size() && i < 3; ++i) s += "; " + failures[i];
  return s;
}

}  // namespace

int host_of(int rank, int nranks, int hosts) {
  const int per_host = (nranks + hosts - 1) / hosts;
  return rank / per_host;
}

RunResult run_nccom_once(const NccomRun& run) {
  RunResult result;
  const auto deadline = Clock::now() + run.timeout;
  // The ranks give up before the runner does, so they can say why.
  const std::string timeout_ms = std::to_string(run.timeout.count() * 750);
  const std::map<std::string, std::string> env = {{"CCOM_SOCKET_IFNAME", "lo"},
                                                  {"NCCOM_BOOTSTRAP_PROTOCOL", run.protocol},
                                                  {"NCCOM_BOOTSTRAP_TIMEOUT_MS", timeout_ms},
                                                  {"NEURON_CCOM_SOCK_TIMEOUT", timeout_ms},
                                                  {"NCCOM_CONFIG", ""},
                                                  {"NCCL_DEBUG", "WARN"}};
  auto args_of = [&](int rank) {
    return std::vector<std::string>{std::to_string(run.nranks), std::to_string(rank),
                                    std::to_string(host_of(rank, run.nranks, run.hosts))};
  };

  // Child i is rank (i + 1) % nranks: the id receivers first, rank 0 last.
  ProcessGroup group;
  for (int rank = 1; rank < run.nranks; ++rank) {
    if (group.start(run.rank_program, args_of(rank), env, &result.error) < 0) return result;
  }
  auto loaded_or_gone = [&](int child) {
    return !group.line_with(child, "loaded").empty() || group.stdout_closed(child);
  };
  auto all_settled = [&] {
    for (std::size_t i = 0; i < group.size(); ++i) {
      if (!loaded_or_gone(static_cast<int>(i))) return false;
    }
    return true;
  };
  if (!group.pump_until(all_settled, deadline)) {
    result.error = "ranks did not load libnccom in time";
    return result;
  }
  for (std::size_t i = 0; i < group.size(); ++i) {
    const int child = static_cast<int>(i);
    if (group.line_with(child, "loaded").empty()) {
      group.finish(Clock::now());
      result.error = "before the id: " + describe(group, child, child + 1);
      return result;
    }
  }
  const int root = group.start(run.rank_program, args_of(0), env, &result.error);
  if (root < 0) return result;
  auto has_id = [&] { return !group.line_with(root, "id=").empty() || group.stdout_closed(root); };
  group.pump_until(has_id, deadline);
  const std::string id_line = group.line_with(root, "id=");
  if (id_line.empty()) {
    group.finish(Clock::now());
    result.error = "rank 0 made no id: " + describe(group, root, 0);
    return result;
  }
  const std::string id = id_line.substr(3, id_line.find(' ') - 3);
  const int64_t t_id = field(id_line, "t_id");
  for (int child = 0; child < root; ++child) group.send_line_and_close(child, id);
  group.send_line_and_close(root, "");
  const bool in_time = group.finish(deadline);

  std::vector<std::string> failures;
  int64_t t_ready_max = 0;
  for (int child = 0; child <= root; ++child) {
    const int rank = (child + 1) % run.nranks;
    const int64_t t_ready = field(group.line_with(child, "t_ready="), "t_ready");
    const ChildOutput& out = group.output(child);
    if (t_ready < 0 || out.exit_code != 0) {
      failures.push_back(describe(group, child, rank));
      continue;
    }
    t_ready_max = std::max(t_ready_max, t_ready);
  }
  if (!failures.empty() || !in_time) {
    result.error = (in_time ? "" : "timed out; ") + summarise(failures, run.nranks);
    return result;
  }
  result.ok = true;
  result.ms = static_cast<double>(t_ready_max - t_id) / 1e6;
  return result;
}

RunResult run_mpi_once(const MpiRun& run) {
  RunResult result;
  const std::vector<std::string> args = {"--allow-run-as-root",
                                         "--oversubscribe",
                                         "-np",
                                         std::to_string(run.nranks),
                                         "--mca",
                                         "btl",
                                         "self,vader,tcp",
                                         "--mca",
                                         "btl_tcp_if_include",
                                         "lo",
                                         "--mca",
                                         "oob_tcp_if_include",
                                         "lo",
                                         run.mpi_program};
  ProcessGroup group;
  if (group.start(run.mpirun, args, {}, &result.error) < 0) return result;
  const bool in_time = group.finish(Clock::now() + run.timeout);
  const std::string line = group.line_with(0, "t_start_min=");
  const ChildOutput& out = group.output(0);
  const std::string status =
      !in_time ? "timed out" : "mpirun exit " + std::to_string(out.exit_code);
  const int64_t start_min = field(line, "t_start_min");
  const int64_t start_max = field(line, "t_start_max");
  const int64_t end_max = field(line, "t_end_max");
  if (start_min < 0 || start_max < 0 || end_max < 0) {
    result.error = status + ": " + first_message(out.err);
    return result;
  }
  if (!in_time || out.exit_code != 0) {
    result.warning = status + " after rank 0 printed its stamps: " + first_message(out.err);
  }
  result.ok = true;
  result.ms = static_cast<double>(end_max - start_min) / 1e6;
  result.start_skew_ms = static_cast<double>(start_max - start_min) / 1e6;
  return result;
}

}  // namespace nccom_bench
