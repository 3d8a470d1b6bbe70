// Running the checks in order, with their prerequisites (checks.h), each in
// a process of its own (isolate.h).
#include "checks.h"
#include "isolate.h"

#include <algorithm>
#include <chrono>
#include <set>

namespace nccom::plugin_check {
namespace {

// `names` and everything they need, transitively.
std::set<std::string> closure(const std::vector<CheckDef>& checks, std::vector<std::string> todo) {
  std::set<std::string> chosen;
  while (!todo.empty()) {
    const std::string name = todo.back();
    todo.pop_back();
    if (!chosen.insert(name).second) continue;
    for (const CheckDef& c : checks) {
      if (name == c.name) todo.insert(todo.end(), c.needs.begin(), c.needs.end());
    }
  }
  return chosen;
}

const CheckRecord* find(const Report& report, const std::string& name) {
  for (const CheckRecord& r : report.checks) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

// "needs X, which failed", or "" when every prerequisite passed.
std::string missing_prerequisite(const Report& report, const CheckDef& check) {
  for (const char* need : check.needs) {
    const CheckRecord* before = find(report, need);
    if (before == nullptr) return std::string("needs ") + need + ", which did not run";
    if (before->outcome.verdict == Verdict::kFail)
      return std::string("needs ") + need + ", which failed";
    if (before->outcome.verdict == Verdict::kSkip)
      return std::string("needs ") + need + ", which was skipped";
  }
  return "";
}

}  // namespace

std::vector<CheckDef> all_checks() {
  std::vector<CheckDef> checks = setup_checks();
  for (auto part : {data_checks(), teardown_checks(), robustness_checks()})
    checks.insert(checks.end(), part.begin(), part.end());
  return checks;
}

std::vector<CheckDef> setup_of(const CheckDef& check) {
  const std::vector<CheckDef> checks = all_checks();
  const std::set<std::string> needed =
      closure(checks, std::vector<std::string>(check.needs.begin(), check.needs.end()));
  std::vector<CheckDef> setup;
  for (const CheckDef& c : checks) {
    if (needed.count(c.name) != 0) setup.push_back(c);
  }
  return setup;
}

void run_suite(const Options& options, Report& report,
               const std::function<void(const CheckRecord&)>& row) {
  const std::vector<CheckDef> checks = all_checks();
  std::set<std::string> chosen;
  for (const CheckDef& c : checks) chosen.insert(c.name);
  if (!options.only.empty()) chosen = closure(checks, options.only);
  report.every_check = chosen.size() == checks.size();
  Isolation isolation(options);
  for (const CheckDef& check : checks) {
    if (chosen.count(check.name) == 0) continue;
    const std::string missing = missing_prerequisite(report, check);
    CheckRecord record = missing.empty() ? isolation.run(check, setup_of(check))
                                         : CheckRecord{check.name, check.description,
                                                       skipped(missing), 0, check.group};
    report.checks.push_back(std::move(record));
    row(report.checks.back());
  }
}

Outcome run_here(Context& ctx, const std::vector<CheckDef>& setup, const CheckDef& check,
                 long long* milliseconds) {
  *milliseconds = 0;
  Outcome outcome;
  bool ready = true;
  ctx.observe = false;
  for (const CheckDef& s : setup) {
    guard::running(s.name);
    const Outcome done = s.run(ctx);
    if (done.verdict == Verdict::kPass) continue;
    // It passed in its own process; here it did not.
    outcome = done;
    outcome.detail = std::string("its setup failed this time: ") + s.name +
                     (done.verdict == Verdict::kSkip ? " was skipped: " : " failed: ") +
                     done.detail;
    ready = false;
    break;
  }
  if (ready) {
    ctx.observe = true;
    guard::running(check.name);
    guard::check_started();
    const auto start = std::chrono::steady_clock::now();
    outcome = check.run(ctx);
    *milliseconds = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - start)
                        .count();
  }
  guard::running("(ending the peer)");
  if (ctx.peer != nullptr && !ctx.peer->stop()) {
    const std::string stuck = "the peer (" + ctx.peer->description() +
                              ") did not stop cleanly: it is stuck in the plugin, or exited with "
                              "an error or a signal";
    if (outcome.verdict == Verdict::kPass) {
      outcome = failed("the check passed, but then " + stuck);
    } else {
      outcome.detail += "; then " + stuck;
    }
  }
  return outcome;
}

}  // namespace nccom::plugin_check
