// NetNeuronBackpressure/*: a net that refuses most posts (NULL request) and
// holds completions back still gets every slice exactly once.
#include "device.h"
#include "wrapped_net.h"

namespace nn_test {
namespace {

class NetNeuronBackpressure : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ASSERT_NE(transport(), nullptr);
    require_net(GetParam(), &net);
  }
  const ncclNet_v6_t* net = nullptr;
};

TEST_P(NetNeuronBackpressure, NullRequestsAndDelayedCompletionsDeliverExactlyOnce) {
  BlockSpec spec;
  spec.net_override = wrap_net(net, WrapConfig{4, 25});
  OpSpec dyn{{40, 0, 7}};
  dyn.dynamic = true;
  OpSpec early{{1, 2, 0, 3}, true, true, false, 2, 1};
  spec.ops = {OpSpec{{1, 1000, 0, 77777, 5}}, dyn, early};
  TwoRanks world(net, spec);
  ASSERT_FALSE(HasFailure());
  const int executions = 4;
  for (int e = 0; e < executions; ++e) ASSERT_TRUE(world.run_execution()) << "execution " << e;
  // Non-empty static slices + every dynamic slice, both ranks, every execution.
  const int per_rank = 4 + 3 + 3;
  EXPECT_EQ(wrap_stats().isend_posted.load(), 2 * per_rank * executions);
  EXPECT_EQ(wrap_stats().irecv_posted.load(), 2 * per_rank * executions);
  EXPECT_GT(wrap_stats().refused.load(), 0);
  EXPECT_GT(wrap_stats().held.load(), 0);
}

TEST_P(NetNeuronBackpressure, MoreSlicesThanTheRequestRingHolds) {
  BlockSpec spec;
  spec.net_override = wrap_net(net, WrapConfig{2, 3});
  std::vector<uint32_t> sizes(300, 8);
  spec.ops = {OpSpec{sizes, false, true, false, 200, 1}};
  TwoRanks world(net, spec);
  ASSERT_FALSE(HasFailure());
  ASSERT_TRUE(world.run_execution());
  EXPECT_EQ(wrap_stats().isend_posted.load(), 600);
  EXPECT_EQ(wrap_stats().irecv_posted.load(), 600);
}

TEST_P(NetNeuronBackpressure, SidelinkReadsAreRetriedToo) {
  ncclNetProperties_v6_t props{};
  ASSERT_EQ(net->getProperties(0, &props), ncclSuccess);
  BlockSpec spec;
  spec.sidelink = 1;
  spec.net_override = wrap_net(net, WrapConfig{3, 7});
  spec.ops = {OpSpec{{9, 0, 5000, 1}}};
  TwoRanks world(net, spec);
  ASSERT_FALSE(HasFailure());
  for (int e = 0; e < 3; ++e) ASSERT_TRUE(world.run_execution()) << "execution " << e;
  EXPECT_EQ(wrap_stats().iread_posted.load(), props.rma_supported == 1 ? 2 * 3 * 3 : 0);
  // The announcement is one extra message per connection, once.
  EXPECT_EQ(wrap_stats().isend_posted.load(), 2 * 3 * 3 + (props.rma_supported == 1 ? 2 : 0));
}

INSTANTIATE_TEST_SUITE_P(Nets, NetNeuronBackpressure, ::testing::ValuesIn(net_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace nn_test
