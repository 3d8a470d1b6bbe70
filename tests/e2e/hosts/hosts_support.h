// What the namespace-host suites share: the tool they run, the shipped
// configuration, and counting a phrase in a job's output.
#pragma once

#include "child_process.h"

#include <gtest/gtest.h>

#include <string>

namespace nccom_test {

inline const std::string kNccomTest = std::string(NCCOM_BUILD_DIR) + "/bin/nccom-test";
inline const std::string kShippedConfig = std::string(NCCOM_SOURCE_DIR) + "/config/nccom.toml";

inline int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A job in which rank 3 died: it failed, and a survivor's failure line
// carries the health view naming rank 3 on the host labelled `host`.
inline void expect_rank_3_named_dead(const ChildResult& r, const std::string& host) {
  const std::string all = r.out + r.err;
  EXPECT_NE(r.exit_code, 0) << all;
  EXPECT_NE(all.find("nccom-test: rank "), std::string::npos) << all;
  EXPECT_NE(all.find("the health service says: DEAD: pid "), std::string::npos) << all;
  EXPECT_NE(all.find("on host " + host + " (rank 3 of comm "), std::string::npos) << all;
}

}  // namespace nccom_test
