// NetNeuronPrimitive/*: the send/recv primitives between two ranks of one
// process, over every built net plugin, driven by the scripted device.
#include "build_paths.h"
#include "device.h"
#include "wrapped_net.h"

namespace nn_test {
namespace {

class NetNeuronPrimitive : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ASSERT_NE(transport(), nullptr) << "could not load " << NN_TRANSPORT_PLUGIN;
    require_net(GetParam(), &net);
  }
  const ncclNet_v6_t* net = nullptr;
};

TEST_P(NetNeuronPrimitive, FixedSizesBothWays) {
  BlockSpec spec;
  spec.ops = {OpSpec{{1, 7, 4097, 65537, 300001}}};
  TwoRanks world(net, spec);
  ASSERT_FALSE(HasFailure());
  EXPECT_TRUE(world.run_execution());
}

TEST_P(NetNeuronPrimitive, ZeroSizeSlicesAreEmptyAndStillCounted) {
  BlockSpec spec;
  spec.ops = {OpSpec{{0, 5, 0, 0, 1024, 0}}};
  TwoRanks world(net, spec);
  ASSERT_FALSE(HasFailure());
  EXPECT_TRUE(world.run_execution());
}

TEST_P(NetNeuronPrimitive, ManyExecutionsOfOneBlockRearm) {
  BlockSpec spec;
  spec.ops = {OpSpec{{100, 3000, 1}, false, false, false, 2, 1}};
  TwoRanks world(net, spec);
  ASSERT_FALSE(HasFailure());
  for (int e = 0; e < 25; ++e) ASSERT_TRUE(world.run_execution()) << "execution " << e;
}

TEST_P(NetNeuronPrimitive, SeveralOpsPerBlockWithTheirOwnCredits) {
  BlockSpec spec;
  spec.ops = {OpSpec{{33, 44}, false, false, false, 1, 1},
              OpSpec{{1, 2, 3, 4, 5, 6, 7}, false, false, false, 3, 5},
              OpSpec{{70000}, false, false, false, 7, 2}};
  TwoRanks world(net, spec);
  ASSERT_FALSE(HasFailure());
  for (int e = 0; e < 3; ++e) ASSERT_TRUE(world.run_execution()) << "execution " << e;
}

TEST_P(NetNeuronPrimitive, DynamicSizesComeFromTheCallbacks) {
  BlockSpec spec;
  OpSpec dyn{{13, 0, 4096, 1, 999}};
  dyn.dynamic = true;
  spec.ops = {OpSpec{{16}}, dyn};
  TwoRanks world(net, spec);
  ASSERT_FALSE(HasFailure());
  for (int e = 0; e < 2; ++e) ASSERT_TRUE(world.run_execution()) << "execution " << e;
  EXPECT_EQ(world.channel(0).table_send.data_type_sz_seen, 4u);
  EXPECT_EQ(world.channel(1).table_recv.data_type_sz_seen, 4u);
}

TEST_P(NetNeuronPrimitive, EarlyRecvPostingReceivesBeforeTheDevicePublishes) {
  BlockSpec spec;
  OpSpec early{{64, 128, 0, 4000, 9}};
  early.early_recv = true;
  spec.ops = {early};
  // The device publishes a receive only after its data arrived: without
  // early posting nothing would ever arrive.
  spec.recv_window = 0;
  TwoRanks world(net, spec);
  ASSERT_FALSE(HasFailure());
  ASSERT_TRUE(world.run_execution());
  EXPECT_GT(world.max_preposted_arrivals(), 0u);
  ASSERT_TRUE(world.run_execution());
}

TEST_P(NetNeuronPrimitive, EarlySendCompletionCreditsOncePerSlice) {
  BlockSpec spec;
  OpSpec early{{64, 0, 128, 100000, 9}, true, false, false, 1, 1};
  spec.ops = {early, OpSpec{{5, 6}}};
  TwoRanks world(net, spec);
  ASSERT_FALSE(HasFailure());
  for (int e = 0; e < 3; ++e) ASSERT_TRUE(world.run_execution()) << "execution " << e;
}

TEST_P(NetNeuronPrimitive, RingSemaphoreIdentityWithOneCredit) {
  BlockSpec spec;
  spec.shared_semaphores = true;
  spec.ops = {OpSpec{{10, 20, 30, 40, 50}, false, false, false, 1, 3}};
  TwoRanks world(net, spec);
  ASSERT_FALSE(HasFailure());
  for (int e = 0; e < 2; ++e) ASSERT_TRUE(world.run_execution()) << "execution " << e;
}

TEST_P(NetNeuronPrimitive, IndexRingWrapsWithASmallLoopAndTwoFolds) {
  BlockSpec spec;
  spec.loop_size = 8;
  spec.fold_n = 2;
  spec.recv_window = 3;
  std::vector<uint32_t> sizes;
  for (uint32_t i = 0; i < 30; ++i) sizes.push_back(1 + i * 37);
  spec.ops = {OpSpec{sizes, false, false, false, 3, 1}, OpSpec{{8, 9}, false, false, false, 2, 1}};
  TwoRanks world(net, spec);
  ASSERT_FALSE(HasFailure());
  for (int e = 0; e < 2; ++e) ASSERT_TRUE(world.run_execution()) << "execution " << e;
}

TEST_P(NetNeuronPrimitive, VariablePeerFindsTheConnectionByRank) {
  BlockSpec spec;
  spec.variable_peer = true;
  spec.ops = {OpSpec{{3, 300, 30000}}};
  TwoRanks world(net, spec);
  ASSERT_FALSE(HasFailure());
  EXPECT_TRUE(world.run_execution());
}

TEST_P(NetNeuronPrimitive, OneWayBlockFinishesTheIdleDirectionAtOnce) {
  BlockSpec spec;
  spec.rank1_sends = false;
  spec.ops = {OpSpec{{11, 22, 33}}};
  TwoRanks world(net, spec);
  ASSERT_FALSE(HasFailure());
  for (int e = 0; e < 2; ++e) ASSERT_TRUE(world.run_execution()) << "execution " << e;
}

TEST_P(NetNeuronPrimitive, OneProxyThreadPerRank) {
  BlockSpec spec;
  OpSpec dyn{{13, 0, 4096}};
  dyn.dynamic = true;
  OpSpec early{{7, 0, 70000}, true, true, false, 2, 1};
  spec.ops = {OpSpec{{1, 5000, 0, 65537}}, dyn, early};
  TwoRanks world(net, spec);
  ASSERT_FALSE(HasFailure());
  for (int e = 0; e < 10; ++e) ASSERT_TRUE(world.run_execution_threaded()) << "execution " << e;
}

TEST_P(NetNeuronPrimitive, SidelinkConfirmsEveryReceiveWhenTheNetHasRma) {
  ncclNetProperties_v6_t props{};
  ASSERT_EQ(net->getProperties(0, &props), ncclSuccess);
  BlockSpec spec;
  spec.sidelink = 1;
  spec.net_override = wrap_net(net, WrapConfig{});  // counts only
  spec.ops = {OpSpec{{1, 4096, 0, 70000}}, OpSpec{{5}}};
  TwoRanks world(net, spec);
  ASSERT_FALSE(HasFailure());
  for (int e = 0; e < 3; ++e) ASSERT_TRUE(world.run_execution()) << "execution " << e;
  // One confirming read per received non-empty slice with RMA; the
  // two-sided path (no RMA, e.g. sockets) reads nothing.
  EXPECT_EQ(wrap_stats().iread_posted.load(), props.rma_supported == 1 ? 2 * 4 * 3 : 0);
}

INSTANTIATE_TEST_SUITE_P(Nets, NetNeuronPrimitive, ::testing::ValuesIn(net_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace nn_test
