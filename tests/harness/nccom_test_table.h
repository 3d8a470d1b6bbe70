// nccom-test's table as the end-to-end suites read it: its data rows, split
// into columns. Lines that start with a size are rows, except libnccom's own
// log lines (with NCCL_DEBUG set they share rank 0's stdout, as in
// nccl-tests).
#pragma once

#include <cctype>
#include <sstream>
#include <string>
#include <vector>

namespace nccom_test {

inline std::vector<std::vector<std::string>> table_rows(const std::string& out) {
  std::vector<std::vector<std::string>> r;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    const size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos || !std::isdigit(static_cast<unsigned char>(line[first])))
      continue;
    if (line.find(" CCOM ") != std::string::npos) continue;
    std::istringstream w(line);
    std::vector<std::string> cols;
    for (std::string c; w >> c;) cols.push_back(c);
    r.push_back(cols);
  }
  return r;
}

}  // namespace nccom_test
