// Running the checks in order, with their prerequisites (checks.h).
#include "checks.h"

#include <algorithm>
#include <chrono>
#include <set>

namespace nccom::plugin_check {
namespace {

std::set<std::string> selection(const std::vector<CheckDef>& checks, const std::string& only) {
  std::set<std::string> chosen;
  if (only.empty()) {
    for (const CheckDef& c : checks) chosen.insert(c.name);
    return chosen;
  }
  std::vector<std::string> todo{only, "close", "fini"};
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

}  // namespace

std::vector<CheckDef> all_checks() {
  std::vector<CheckDef> checks = setup_checks();
  for (auto part : {data_checks(), error_checks()})
    checks.insert(checks.end(), part.begin(), part.end());
  return checks;
}

void run_suite(Context& ctx, Report& report) {
  const std::vector<CheckDef> checks = all_checks();
  const std::set<std::string> chosen = selection(checks, ctx.options.only);
  for (const CheckDef& check : checks) {
    if (chosen.count(check.name) == 0) continue;
    CheckRecord record{check.name, check.description, {}, 0};
    std::string missing;
    for (const char* need : check.needs) {
      const CheckRecord* before = find(report, need);
      if (before == nullptr || before->outcome.verdict != Verdict::kPass) {
        missing = std::string("needs ") + need +
                  (before == nullptr                           ? ", which did not run"
                   : before->outcome.verdict == Verdict::kFail ? ", which failed"
                                                               : ", which was skipped");
        break;
      }
    }
    if (!missing.empty()) {
      record.outcome = skipped(missing);
    } else {
      const auto start = std::chrono::steady_clock::now();
      guard::running(check.name);
      record.outcome = check.run(ctx);
      guard::running(nullptr);
      record.milliseconds = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::steady_clock::now() - start)
                                .count();
    }
    report.checks.push_back(std::move(record));
  }
  if (ctx.peer != nullptr && !ctx.peer->stop()) {
    report.checks.push_back({"peer-exit", "the peer ends cleanly",
                             failed("the peer (" + ctx.peer->description() +
                                    ") did not stop cleanly: it is stuck in the plugin, or "
                                    "exited with an error or a signal"),
                             0});
  }
}

}  // namespace nccom::plugin_check
