// Shared by the NetConformance* suites: running nccom-plugin-check.
#pragma once

#include "build_paths.h"
#include "child_process.h"

#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace net_conformance {

inline nccom_test::ChildResult run_check(const std::vector<std::string>& args,
                                         const std::map<std::string, std::string>& env = {},
                                         const std::string& tool = NET_CONFORMANCE_TOOL) {
  return nccom_test::run_child(tool, args, env);
}

// Everything the tool printed, for assertion messages.
inline std::string output(const nccom_test::ChildResult& r) {
  return "exit " + std::to_string(r.exit_code) + ", signal " + std::to_string(r.signal) +
         "\n--- stdout ---\n" + r.out + "--- stderr ---\n" + r.err;
}

// The table rows whose RESULT column says FAIL.
inline std::vector<std::string> failed_rows(const std::string& out) {
  std::vector<std::string> rows;
  std::size_t start = 0;
  while (start < out.size()) {
    std::size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    const std::string line = out.substr(start, end - start);
    std::istringstream words(line);
    std::string check, result;
    if (words >> check >> result && result == "FAIL") rows.push_back(line);
    start = end + 1;
  }
  return rows;
}

}  // namespace net_conformance
