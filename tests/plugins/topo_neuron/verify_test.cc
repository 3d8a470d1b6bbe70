// Suite NeuronVerify: verifyTopology and the rank check.
#include "topo_neuron/verify.h"

#include <gtest/gtest.h>

namespace nccom::topo_neuron {
namespace {

std::vector<int> iota(int n) {
  std::vector<int> v;
  for (int i = 0; i < n; ++i) v.push_back(i);
  return v;
}

TEST(NeuronVerify, AcceptsOneFourEightSixteen) {
  for (int n : {1, 4, 8, 16})
    EXPECT_TRUE(verifyTopology(platformSpec(Variant::Trn2), {iota(n), iota(16), false})) << n;
}

TEST(NeuronVerify, RejectsOtherCountsWithTheSpecTail) {
  for (int n : {2, 3, 5, 12, 15}) {
    auto st = verifyTopology(platformSpec(Variant::Trn1), {iota(n), iota(16), false});
    ASSERT_FALSE(st) << n;
    const std::string tail = "expects 1, 4, 8, or 16 local devices but got " + std::to_string(n);
    EXPECT_NE(st.error().message.find(tail), std::string::npos) << st.error().message;
  }
}

TEST(NeuronVerify, Inf2UsesItsOwnCounts) {
  EXPECT_TRUE(verifyTopology(platformSpec(Variant::Inf2), {iota(12), iota(12), false}));
  auto st = verifyTopology(platformSpec(Variant::Inf2), {iota(4), iota(12), false});
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("expects 1, 6, or 12 local devices but got 4"),
            std::string::npos)
      << st.error().message;
}

TEST(NeuronVerify, MissingDevicesMessageIsVerbatim) {
  auto st = verifyTopology(platformSpec(Variant::Trn2), {{0, 1, 6, 9}, {0, 1, 2, 3}, false});
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message,
            "Unsupported topology. Devices with IDs 6 and 9 are part of topology but devices "
            "with those IDs are missing");
}

TEST(NeuronVerify, DisabledSkipsBothChecks) {
  EXPECT_TRUE(verifyTopology(platformSpec(Variant::Trn2), {{0, 1, 6}, {0}, true}));
}

TEST(NeuronVerify, DuplicateRankDevicesCountOnce) {
  EXPECT_TRUE(
      verifyTopology(platformSpec(Variant::Trn2), {{0, 0, 1, 1, 2, 2, 3, 3}, iota(4), false}));
}

TEST(NeuronVerify, MoreRanksThanCores) {
  EXPECT_TRUE(checkRanksFitCores(64, 64));
  auto st = checkRanksFitCores(65, 64);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("65 local ranks but only 64"), std::string::npos);
}

}  // namespace
}  // namespace nccom::topo_neuron
