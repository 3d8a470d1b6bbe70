// What the namespace-host suites share: the tool they run, the shipped
// configuration, and counting a phrase in a job's output.
#pragma once

#include <string>

namespace nccom_test {

inline const std::string kNccomTest = std::string(NCCOM_BUILD_DIR) + "/bin/nccom-test";
inline const std::string kShippedConfig = std::string(NCCOM_SOURCE_DIR) + "/config/nccom.toml";

inline int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace nccom_test
