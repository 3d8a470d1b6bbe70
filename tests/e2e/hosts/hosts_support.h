// What the namespace-host suites share: what the machine must have for
// namespace hosts, the tool they run, the shipped configuration, and
// counting a phrase in a job's output.
#pragma once

#include "build_paths.h"
#include "child_process.h"
#include "machine.h"

#include <gtest/gtest.h>

#include <string>

namespace nccom_test {

inline const std::string kNccomTest = std::string(NCCOM_BUILD_DIR) + "/bin/nccom-test";
inline const std::string kShippedConfig = std::string(NCCOM_SOURCE_DIR) + "/config/nccom.toml";

// Namespace hosts (netns_hosts.h) need root, network namespaces and
// iproute2's ip: asked of the machine itself. Skips the test when it lacks
// one (the caller returns when IsSkipped()); after that, hosts that cannot
// be made fail the test.
inline void skip_unless_namespace_hosts() {
  machine::skip_unless_network_namespaces();
  if (::testing::Test::IsSkipped()) return;
  if (std::string why = machine::program("/usr/sbin/ip"); !why.empty())
    NCCOM_SKIP_MACHINE_LACKS(kProgram) << why << " (iproute2)";
}

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
