// What a check step produces: a Failure with its reason (the first function
// that sees a problem words it; callers only pass it on), and a check's
// Outcome as the table shows it.
#pragma once

#include <nccom/util/result.h>

#include <string>
#include <utility>

namespace nccom::plugin_check {

struct Failure {
  std::string reason;
  bool timed_out = false;  // a deadline passed (as opposed to an error answer)
};

template <class T = void>
using Expected = nccom::Result<T, Failure>;

inline Failure fail(std::string reason) { return Failure{std::move(reason), false}; }
inline Failure timeout(std::string what) {
  return Failure{"timed out waiting for " + std::move(what), true};
}

enum class Verdict { kPass, kFail, kSkip };

struct Outcome {
  Verdict verdict = Verdict::kPass;
  std::string detail;  // a note on a pass, the reason of a failure or skip
};

inline Outcome passed(std::string note = {}) { return {Verdict::kPass, std::move(note)}; }
inline Outcome failed(std::string reason) { return {Verdict::kFail, std::move(reason)}; }
inline Outcome failed(const Failure& f) { return {Verdict::kFail, f.reason}; }
inline Outcome skipped(std::string why) { return {Verdict::kSkip, std::move(why)}; }

}  // namespace nccom::plugin_check
