// Suite NeuronPlatform: the table holds the known facts of each platform
// (checked by hand), and descriptions are consistent.
#include "topo_neuron/platform.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace nccom::topo_neuron {
namespace {

int degree(const PlatformDescription& d, int dev) {
  int n = 0;
  for (const auto& l : d.links) n += (l.a == dev) + (l.b == dev);
  return n;
}

TEST(NeuronPlatform, TableHasOneRowPerVariantInOrder) {
  const auto& t = platformTable();
  ASSERT_EQ(t.size(), 8u);
  for (size_t i = 0; i < t.size(); ++i) EXPECT_EQ(static_cast<size_t>(t[i].variant), i);
}

TEST(NeuronPlatform, CodenamesAndGenerations) {
  EXPECT_STREQ(platformSpec(Variant::Trn1).codename, "SUNDA");
  EXPECT_STREQ(platformSpec(Variant::Inf2).codename, "SUNDA");
  EXPECT_STREQ(platformSpec(Variant::Trn1).generation, "v2");
  EXPECT_STREQ(platformSpec(Variant::Trn2).codename, "CAYMAN");
  EXPECT_STREQ(platformSpec(Variant::Trn2).generation, "v3");
  EXPECT_STREQ(platformSpec(Variant::Trn3).codename, "MARIANA");
  EXPECT_STREQ(platformSpec(Variant::Trn3SwitchV1).generation, "v4");
}

TEST(NeuronPlatform, Trn1_32xlargeIs16DevicesAnd32Cores) {
  auto d = describePlatform(Variant::Trn1, {16, 1, -1});
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->nDevices, 16);
  EXPECT_EQ(d->nVcores(), 32);
  auto small = describePlatform(Variant::Trn1, {1, 1, -1});  // trn1.2xlarge
  ASSERT_TRUE(small);
  EXPECT_EQ(small->nVcores(), 2);
  EXPECT_TRUE(small->links.empty());
}

TEST(NeuronPlatform, Inf2_48xlargeIs12DevicesAnd24CoresInARing) {
  auto d = describePlatform(Variant::Inf2, {12, 1, -1});
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->nVcores(), 24);
  EXPECT_EQ(d->links.size(), 12u);
  for (int i = 0; i < 12; ++i) EXPECT_TRUE(d->linked(i, (i + 1) % 12));
  EXPECT_TRUE(d->nics.empty());
  auto mid = describePlatform(Variant::Inf2, {6, 1, -1});  // inf2.24xlarge
  ASSERT_TRUE(mid);
  EXPECT_EQ(mid->nVcores(), 12);
}

TEST(NeuronPlatform, Trn2Is16ChipsIn4x4TorusWith4NeighboursEach) {
  auto d = describePlatform(Variant::Trn2, {16, 1, -1});
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->links.size(), 32u);
  for (int dev = 0; dev < 16; ++dev) EXPECT_EQ(degree(*d, dev), 4) << dev;
  // Row-major: 5 = (1,1) touches 4, 6, 1, 9; wrap: 0 touches 3 and 12.
  for (int n : {4, 6, 1, 9}) EXPECT_TRUE(d->linked(5, n));
  EXPECT_TRUE(d->linked(0, 3));
  EXPECT_TRUE(d->linked(0, 12));
  EXPECT_FALSE(d->linked(0, 5));
  EXPECT_EQ(d->nVcores(), 128);                               // 8 NeuronCores per chip at LNC 1
  EXPECT_EQ(describePlatform(Variant::Trn2)->nVcores(), 64);  // default LNC 2
}

TEST(NeuronPlatform, C2cPortsAndD2dPeersOnTrn2AndTrn3) {
  for (Variant v :
       {Variant::Trn2, Variant::Trn2UltraServer, Variant::Trn3, Variant::Trn3SwitchV1}) {
    const auto& s = platformSpec(v);
    EXPECT_EQ(s.c2cPortsPerMla, 4);
    for (int e = 0; e < s.senginesPerMla; ++e) EXPECT_EQ(d2dPeers(s, e), std::vector<int>{e ^ 2});
  }
  EXPECT_TRUE(d2dPeers(platformSpec(Variant::Trn1), 0).empty());
}

TEST(NeuronPlatform, UltraServerIsFourInstances) {
  EXPECT_EQ(platformSpec(Variant::Trn2UltraServer).podNodes, 4);
  EXPECT_EQ(platformSpec(Variant::Trn2UltraServer).pod, PodLayout::Ring);
}

TEST(NeuronPlatform, SwitchV1AddsSwitchHopsBehindTheTorus) {
  auto d = describePlatform(Variant::Trn3SwitchV1);
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->links.size(), 120u);  // every pair
  EdgeLocality l;
  ASSERT_TRUE(d->linked(0, 1, &l));
  EXPECT_EQ(l, EdgeLocality::RemoteMLA);
  ASSERT_TRUE(d->linked(0, 5, &l));
  EXPECT_EQ(l, EdgeLocality::RMTV);
}

TEST(NeuronPlatform, FamiliesMapToVariants) {
  EXPECT_EQ(*variantFromInstance(2, false), Variant::Trn1);
  EXPECT_EQ(*variantFromInstance(3, false), Variant::Trn1n);
  EXPECT_EQ(*variantFromInstance(4, false), Variant::Inf2);
  EXPECT_EQ(*variantFromInstance(7, false), Variant::Inf2);
  for (uint32_t f : {5u, 6u, 8u}) EXPECT_EQ(*variantFromInstance(f, false), Variant::Trn2);
  EXPECT_EQ(*variantFromInstance(9, false), Variant::Trn2UltraServer);
  EXPECT_EQ(*variantFromInstance(10, false), Variant::Trn3);
  EXPECT_EQ(*variantFromInstance(10, true), Variant::Trn3SwitchV1);
}

TEST(NeuronPlatform, UnknownPlatformIsAnError) {
  for (uint32_t f : {0u, 1u, 11u, 999u}) {
    auto v = variantFromInstance(f, false);
    ASSERT_FALSE(v) << f;
    EXPECT_NE(v.error().message.find("unknown platform"), std::string::npos);
  }
  auto d = describePlatform(static_cast<Variant>(42));
  ASSERT_FALSE(d);
  EXPECT_NE(d.error().message.find("unknown platform"), std::string::npos);
}

TEST(NeuronPlatform, BadInstanceSizeOrLncIsAnError) {
  auto a = describePlatform(Variant::Trn2, {12, -1, -1});
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().message.find("no instance with 12 devices"), std::string::npos);
  auto b = describePlatform(Variant::Trn1, {16, 2, -1});
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("logical-core size 2"), std::string::npos);
  auto c = describePlatform(Variant::Emu, {16, 1, 3});
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("3 NICs"), std::string::npos);
}

TEST(NeuronPlatform, VcoreMappingFollowsLnc) {
  auto d = describePlatform(Variant::Trn2, {16, 2, -1});
  ASSERT_TRUE(d);
  ASSERT_EQ(d->vcoresPerDevice, 4);
  const auto& v = d->vcores[5];  // device 1, vcore 1: NCs 2-3 on SEngine 1
  EXPECT_EQ(v.device, 1);
  EXPECT_EQ(v.firstNc, 2);
  EXPECT_EQ(v.ncCount, 2);
  EXPECT_EQ(v.sengine, 1);
  EXPECT_EQ(intraDeviceLocality(*d, 4, 5), EdgeLocality::RMTV);   // SEngine 0 -> 1
  EXPECT_EQ(intraDeviceLocality(*d, 4, 6), EdgeLocality::D2D);    // SEngine 0 -> 2
  EXPECT_EQ(intraDeviceLocality(*d, 4, 7), EdgeLocality::Local);  // SEngine 0 -> 3
  auto d1 = describePlatform(Variant::Trn2, {16, 1, -1});
  EXPECT_EQ(intraDeviceLocality(*d1, 0, 1), EdgeLocality::SharedMemory);
}

TEST(NeuronPlatform, NicsShareSwitchesWithTheirDevices) {
  auto d = describePlatform(Variant::Trn1, {16, 1, -1});  // 8 NICs, 2 devices each
  ASSERT_TRUE(d);
  ASSERT_EQ(d->nics.size(), 8u);
  for (const auto& nic : d->nics) {
    EXPECT_EQ(nic.devices, (std::vector<int>{2 * nic.id, 2 * nic.id + 1}));
    for (int dev : nic.devices) EXPECT_EQ(d->devices[dev].pciSwitch, nic.pciSwitch);
  }
  auto t2 = describePlatform(Variant::Trn2);
  ASSERT_EQ(t2->nics.size(), 16u);
  for (const auto& nic : t2->nics) EXPECT_EQ(nic.devices, std::vector<int>{nic.id});
  auto emu = describePlatform(Variant::Emu, {8, 1, -1});
  ASSERT_EQ(emu->nics.size(), 2u);
  EXPECT_EQ(emu->nics[1].devices, (std::vector<int>{4, 5, 6, 7}));
}

}  // namespace
}  // namespace nccom::topo_neuron

#include "topo_neuron/selection.h"

namespace nccom::topo_neuron {
namespace {

TEST(NeuronPlatform, SearchSelectionPredicate) {
  // Switch-V1 is NEW whatever the knob says.
  for (auto knob : {std::optional<bool>{}, std::optional<bool>{false}, std::optional<bool>{true}}) {
    const auto c = selectSearch(Variant::Trn3SwitchV1, knob);
    EXPECT_EQ(c.algorithm, SearchAlgorithm::New);
    EXPECT_FALSE(c.fromKnob);
  }
  for (const auto& s : platformTable()) {
    if (s.variant == Variant::Trn3SwitchV1) continue;
    EXPECT_EQ(selectSearch(s.variant, std::nullopt).algorithm, SearchAlgorithm::Old) << s.name;
    EXPECT_EQ(selectSearch(s.variant, std::nullopt, true).algorithm, SearchAlgorithm::New);
    const auto on = selectSearch(s.variant, true);
    EXPECT_EQ(on.algorithm, SearchAlgorithm::New);
    EXPECT_TRUE(on.fromKnob);
    EXPECT_EQ(selectSearch(s.variant, false, true).algorithm, SearchAlgorithm::Old);
  }
}

}  // namespace
}  // namespace nccom::topo_neuron
