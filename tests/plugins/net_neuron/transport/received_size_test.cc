// NetNeuronReceivedSize/*: what the transport does with the size a net
// plugin reports for a completed receive. It relies on it only where nothing
// else says how much arrived (a dynamic receive): a plugin that leaves it
// unwritten (as NVIDIA-layout plugins may) still carries every static slice,
// fails a dynamic one naming the plugin, and a size reported wrong is named as
// the plugin's report.
#include "device.h"
#include "wrapped_net.h"

namespace nn_test {
namespace {

class NetNeuronReceivedSize : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ASSERT_NE(transport(), nullptr);
    require_net(GetParam(), &net);
  }
  const ncclNet_v6_t* net = nullptr;
};

TEST_P(NetNeuronReceivedSize, UnwrittenSizesStillCarryEveryStaticSlice) {
  BlockSpec spec;
  WrapConfig config;
  config.recv_sizes_unwritten = true;
  spec.net_override = wrap_net(net, config);
  OpSpec early{{1, 2, 0, 3}, true, true, false, 2, 1};
  spec.ops = {OpSpec{{1, 1000, 0, 77777, 5}}, early};
  TwoRanks world(net, spec);
  ASSERT_FALSE(HasFailure());
  // The scripted device checks every byte and every semaphore increment.
  for (int e = 0; e < 3; ++e) ASSERT_TRUE(world.run_execution()) << "execution " << e;
  EXPECT_EQ(wrap_stats().irecv_posted.load(), 2 * (4 + 3) * 3);
}

TEST_P(NetNeuronReceivedSize, AnUnwrittenSizeFailsADynamicReceiveNamingThePlugin) {
  BlockSpec spec;
  WrapConfig config;
  config.recv_sizes_unwritten = true;
  spec.net_override = wrap_net(net, config);
  OpSpec dyn{{40, 0, 7}};
  dyn.dynamic = true;
  spec.ops = {dyn};
  TwoRanks world(net, spec);
  ASSERT_FALSE(HasFailure());
  const ::testing::AssertionResult r = world.run_execution();
  ASSERT_FALSE(r) << "a dynamic receive completed without knowing its size";
  const std::string err = world.last_error();
  EXPECT_NE(err.find("the net plugin test completed a receive without reporting its size"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("this receive's length is dynamic"), std::string::npos) << err;
  EXPECT_NE(err.find("dest descriptor"), std::string::npos) << err;
}

TEST_P(NetNeuronReceivedSize, AWrongSizeIsNamedAsThePluginsReport) {
  BlockSpec spec;
  WrapConfig config;
  config.recv_size_error = -1;
  spec.net_override = wrap_net(net, config);
  spec.rank1_sends = false;
  spec.ops = {OpSpec{{40}}};
  TwoRanks world(net, spec);
  ASSERT_FALSE(HasFailure());
  const ::testing::AssertionResult r = world.run_execution();
  ASSERT_FALSE(r) << "a receive reported one byte short was accepted";
  const std::string err = world.last_error();
  EXPECT_NE(err.find("the net plugin test reported 39 bytes received for a receive that expects "
                     "40: either the plugin misreports received sizes or the sender posted "
                     "another size"),
            std::string::npos)
      << err;
}

INSTANTIATE_TEST_SUITE_P(Nets, NetNeuronReceivedSize, ::testing::ValuesIn(net_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace nn_test
