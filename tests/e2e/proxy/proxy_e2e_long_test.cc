// The 8-rank shapes of the end-to-end proxy test (label long: eight
// processes on two cores take a while to bootstrap and build their graph).
#include "e2e_launch.h"

#include <initializer_list>
#include <map>

namespace proxy_e2e_test {
namespace {

class ProxyE2ELong : public ::testing::TestWithParam<Shape> {};

TEST_P(ProxyE2ELong, OddAndZeroSizedSlicesOnEightRanks) {
  std::vector<Report> reports =
      run_ranks(GetParam(), {"sizes=1,7,0,4096,65537,0,3,1000", "execs=2"});
  if (HasFailure()) return;
  const int n = static_cast<int>(reports.size());
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(reports[r]["exec0"], "ok");
    EXPECT_EQ(reports[r]["exec1"], "ok");
    const int next = std::stoi(reports[r]["next"]);
    ASSERT_TRUE(next >= 0 && next < n && next != r);
    EXPECT_EQ(std::stoi(reports[next]["prev"]), r);
  }
}

TEST_P(ProxyE2ELong, DynamicSizesOnEightRanks) {
  std::vector<Report> reports =
      run_ranks(GetParam(), {"sizes=8,0,4096,12", "dynamic=1", "channels=2"});
  if (HasFailure()) return;
  for (size_t r = 0; r < reports.size(); ++r) EXPECT_EQ(reports[r]["exec0"], "ok") << "rank " << r;
}

std::string shape_name(const ::testing::TestParamInfo<Shape>& info) {
  return std::to_string(info.param.ranks()) + "ranks_" + std::to_string(info.param.hosts) + "hosts";
}

INSTANTIATE_TEST_SUITE_P(Shapes, ProxyE2ELong, ::testing::Values(Shape{1, 8}, Shape{2, 4}),
                         shape_name);

// The same scripted device over libnccom-net (tcp;ofi_rxm) instead of the
// socket net: odd and zero sizes, dynamic sizes, the mesh pattern.
class ProxyE2EOfi : public ::testing::TestWithParam<Shape> {
 protected:
  const std::map<std::string, std::string> env_ = {{"NCCOM_NET_USE_RUNTIME_PLUGIN", "true"},
                                                   {"FI_PROVIDER", "tcp;ofi_rxm"}};
  void run(const std::vector<std::string>& args, std::initializer_list<const char*> execs) {
    std::vector<Report> reports = run_ranks(GetParam(), args, env_);
    if (HasFailure()) return;
    for (size_t r = 0; r < reports.size(); ++r)
      for (const char* e : execs) EXPECT_EQ(reports[r][e], "ok") << "rank " << r << " " << e;
  }
};

TEST_P(ProxyE2EOfi, OddAndZeroSizedSlices) {
  run({"sizes=1,7,0,4096,65537,0,3,1000", "execs=2"}, {"exec0", "exec1"});
}

TEST_P(ProxyE2EOfi, DynamicSizes) { run({"sizes=8,0,4096,12", "dynamic=1"}, {"exec0"}); }

TEST_P(ProxyE2EOfi, MeshPattern) {
  run({"mesh=1", "sizes=1,7,0,4096,65537", "execs=2"}, {"exec0", "exec1"});
}

INSTANTIATE_TEST_SUITE_P(Shapes, ProxyE2EOfi, ::testing::Values(Shape{2, 1}, Shape{2, 2}),
                         shape_name);

}  // namespace
}  // namespace proxy_e2e_test
