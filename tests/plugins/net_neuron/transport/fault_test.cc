// NetNeuronFault/*: a peer that goes away mid-transfer (its comms closed)
// makes the surviving side's op_progress fail within a bounded number of
// ticks, with a message naming the peer, channel, op and descriptor.
#include "device.h"

#include <thread>

namespace nn_test {
namespace {

class NetNeuronFault : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ASSERT_NE(transport(), nullptr);
    require_net(GetParam(), &net);
  }

  // Ticks a while (the transfer is under way, not finished), closes one rank,
  // then expects an error from the survivor within the budget.
  void close_peer_midway(int closing) {
    BlockSpec spec;
    spec.rank1_sends = false;  // rank 0 sends, rank 1 receives
    spec.ops = {OpSpec{std::vector<uint32_t>(64, 65536), false, false, false, 2, 1}};
    TwoRanks world(net, spec);
    ASSERT_FALSE(HasFailure());
    // Four slices move; then the peer goes away and the devices go on.
    world.set_publish_limit(4);
    bool all = false;
    for (int t = 0; t < 4000000 && world.semaphore(1, 0, 3) < 4; ++t) {
      ASSERT_TRUE(world.tick_once(&all));
      std::this_thread::yield();
    }
    ASSERT_EQ(world.semaphore(1, 0, 3), 4u);
    world.close_rank(closing);
    world.set_publish_limit(0xFFFFFFFF);
    const uint64_t budget = 1000000;
    uint64_t ticks = 0;
    ::testing::AssertionResult r = ::testing::AssertionSuccess();
    for (; ticks < budget; ++ticks) {
      r = world.tick_once(&all);
      if (!r || all) break;
      std::this_thread::yield();
    }
    ASSERT_FALSE(r) << "no error within " << ticks << " ticks after the peer closed";
    const std::string err = world.last_error();
    RecordProperty("error", err);
    EXPECT_NE(err.find("rank " + std::to_string(closing)), std::string::npos) << err;
    EXPECT_NE(err.find("channel 0"), std::string::npos) << err;
    EXPECT_NE(err.find("func_rel_op:100"), std::string::npos) << err;
    EXPECT_NE(err.find("descriptor"), std::string::npos) << err;
  }

  const ncclNet_v6_t* net = nullptr;
};

TEST_P(NetNeuronFault, SenderGoesAwayReceiverFails) { close_peer_midway(0); }
TEST_P(NetNeuronFault, ReceiverGoesAwaySenderFails) { close_peer_midway(1); }

INSTANTIATE_TEST_SUITE_P(Nets, NetNeuronFault, ::testing::ValuesIn(net_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace nn_test
