// NeuronSynthesize: the synthesized <system> XML read back by sdk/topo.
// The matrix (every platform x instance size x allowed local device count x
// LNC) checks properties, not copied text: the XML parses and builds; one
// <gpu> per local rank with dev = vcore id and its global rank; a direct
// NVL link between two ranks exactly when they share a device or their
// devices are linked in the platform table; every pair of ranks has a path;
// the NET count is the NICs of the PCIe switches the used devices sit on.
#include "topo_neuron/synthesize.h"

#include <nccom/topo/paths.h>

#include <gtest/gtest.h>

#include <set>

namespace nccom::topo_neuron {
namespace {

struct Case {
  Variant variant;
  int instance;
  int lnc;
  int local;
};

std::vector<Case> allCases() {
  std::vector<Case> out;
  for (const auto& s : platformTable())
    for (int inst : s.instanceDevices)
      for (int lnc : s.lncModes)
        for (int local : s.localDeviceCounts)
          if (local <= inst) out.push_back({s.variant, inst, lnc, local});
  return out;
}

std::string caseName(const Case& c) {
  return std::string(platformSpec(c.variant).name) + " instance=" + std::to_string(c.instance) +
         " lnc=" + std::to_string(c.lnc) + " local=" + std::to_string(c.local);
}

// NICs of the table row for an instance of `inst` devices, `used` of them
// (0..used-1) in use: NICs are spread evenly over PCIe switches; a switch
// holds inst/nics devices (or one device with nics/inst NICs).
int expectedNics(const PlatformSpec& s, int inst, int used) {
  const int nics = s.platform == Platform::Emu ? std::max(1, inst / 4)
                                               : s.nicsFullNode * inst / s.instanceDevices.back();
  if (nics == 0) return 0;
  if (nics >= inst) return used * (nics / inst);
  const int perSwitch = inst / nics;
  return (used + perSwitch - 1) / perSwitch;
}

bool directNvl(const topo::TopoSystem& sys, int a, int b, float* width) {
  for (const auto& l : sys.of(topo::NodeType::GPU)[static_cast<size_t>(a)].links) {
    if (l.type == topo::LinkType::NVL && l.remote == topo::NodeRef{topo::NodeType::GPU, b}) {
      *width = l.width;
      return true;
    }
  }
  return false;
}

void checkCase(const Case& c) {
  auto d = describePlatform(c.variant, {c.instance, c.lnc, -1});
  ASSERT_TRUE(d) << d.error().message;
  // This node is node 1 of 2 (global ranks start after the first node's);
  // a platform without NICs only ever forms single-node communicators.
  const int perNode = c.local * d->vcoresPerDevice;
  const int nodes = d->nics.empty() ? 1 : 2;
  const NodeShare share =
      fullShare(*d, c.local, (nodes - 1) * perNode, nodes * perNode, nodes, nodes - 1);
  auto text = synthesizeSystemXml(*d, share, false);
  ASSERT_TRUE(text) << text.error().message;
  auto doc = topo::parseXml(*text);
  ASSERT_TRUE(doc) << doc.error().message;
  EXPECT_EQ(topo::writeXml(*doc->root), *text);  // lossless, deterministic layout
  auto sys = topo::buildSystem(*doc, systemOptions(*d));
  ASSERT_TRUE(sys) << sys.error().message;

  ASSERT_EQ(sys->count(topo::NodeType::GPU), perNode);
  std::vector<int> gpuOfLocal;
  for (size_t i = 0; i < share.ranks.size(); ++i) {
    const int g = sys->gpuIndexOfRank(share.ranks[i]);
    ASSERT_GE(g, 0) << "rank " << share.ranks[i];
    const auto& info = sys->of(topo::NodeType::GPU)[static_cast<size_t>(g)].gpu;
    EXPECT_EQ(info.dev, share.devices[i] * d->vcoresPerDevice + share.cores[i]);
    EXPECT_EQ(info.sm, smTag(d->platform));
    EXPECT_EQ(info.gdr, 1);
    gpuOfLocal.push_back(g);
  }
  EXPECT_EQ(sys->count(topo::NodeType::NET),
            expectedNics(platformSpec(c.variant), c.instance, c.local));

  // Direct links exactly where the platform has one; intra-device links are
  // wider than any link between devices.
  float widestInter = 0.0F, narrowestIntra = 1e9F;
  for (size_t i = 0; i < gpuOfLocal.size(); ++i) {
    for (size_t j = 0; j < gpuOfLocal.size(); ++j) {
      if (i == j) continue;
      const bool same = share.devices[i] == share.devices[j];
      const bool want = same || d->linked(share.devices[i], share.devices[j]);
      float w = 0.0F;
      const bool have = directNvl(*sys, gpuOfLocal[i], gpuOfLocal[j], &w);
      ASSERT_EQ(have, want) << "ranks " << share.ranks[i] << " and " << share.ranks[j];
      if (!have) continue;
      EXPECT_GT(w, 0.0F);
      if (same)
        narrowestIntra = std::min(narrowestIntra, w);
      else
        widestInter = std::max(widestInter, w);
    }
  }
  if (widestInter > 0.0F && narrowestIntra < 1e9F) {
    EXPECT_GT(narrowestIntra, widestInter);
  }

  ASSERT_TRUE(topo::computePaths(*sys)) << "paths";
  for (int a : share.ranks) {
    for (int b : share.ranks) {
      auto p2p = topo::checkP2p(*sys, a, b, topo::PathSettings{});
      ASSERT_TRUE(p2p) << p2p.error().message;
    }
  }
}

TEST(NeuronSynthesize, PlatformMatrix) {
  const auto cases = allCases();
  EXPECT_GT(cases.size(), 30u);
  for (const auto& c : cases) {
    SCOPED_TRACE(caseName(c));
    checkCase(c);
  }
}

TEST(NeuronSynthesize, APlatformWithoutNicsCannotSpanNodes) {
  auto d = describePlatform(Variant::Inf2, {12, 1, -1});
  ASSERT_TRUE(d) << d.error().message;
  ASSERT_TRUE(d->nics.empty());
  const int perNode = 12 * d->vcoresPerDevice;
  auto one = synthesizeSystemXml(*d, fullShare(*d, 12, 0, perNode, 1, 0), false);
  EXPECT_TRUE(one) << one.error().message;
  auto two = synthesizeSystemXml(*d, fullShare(*d, 12, perNode, 2 * perNode, 2, 1), false);
  ASSERT_FALSE(two);
  EXPECT_NE(two.error().message.find("spans 2 nodes, but this platform has no NIC"),
            std::string::npos)
      << two.error().message;
}

TEST(NeuronSynthesize, HandCheckedNicCounts) {
  // Facts of the platform table (docs/decisions/topo-neuron.md, "NICs and PCIe switches"),
  // not the formula above.
  struct Row {
    Variant v;
    int inst;
    int used;
    int nics;
  };
  const Row rows[] = {{Variant::Trn1, 16, 16, 8}, {Variant::Trn1, 16, 4, 2},
                      {Variant::Trn1, 1, 1, 0},   {Variant::Trn1n, 16, 8, 8},
                      {Variant::Inf2, 12, 12, 0}, {Variant::Trn2, 16, 16, 16},
                      {Variant::Trn2, 16, 4, 4},  {Variant::Trn2, 1, 1, 1},
                      {Variant::Emu, 8, 8, 2},    {Variant::Emu, 16, 4, 1}};
  for (const auto& r : rows) {
    auto d = describePlatform(r.v, {r.inst, -1, -1});
    ASSERT_TRUE(d) << d.error().message;
    auto doc = synthesizeSystem(*d, fullShare(*d, r.used), false);
    ASSERT_TRUE(doc) << doc.error().message;
    auto sys = topo::buildSystem(*doc, systemOptions(*d));
    ASSERT_TRUE(sys) << sys.error().message;
    EXPECT_EQ(sys->count(topo::NodeType::NET), r.nics) << platformSpec(r.v).name << " " << r.used;
  }
}

TEST(NeuronSynthesize, BusIdsAreDistinctAndReadable) {
  EXPECT_EQ(vcoreBusId(3, 5), "0000:43:05.0");
  EXPECT_EQ(switchBusId(2), "0000:12:00.0");
  EXPECT_EQ(nicBusId(15), "0000:8f:00.0");
  // NIC nodes merge on busid & ~0xf (ports of one card): ours never collide.
  std::set<int64_t> ids;
  for (int k = 0; k < 16; ++k) ids.insert(*topo::busIdToInt64(nicBusId(k)) & ~int64_t{0xf});
  EXPECT_EQ(ids.size(), 16u);
}

Result<std::string> synth(Variant v, const NodeShare& s, bool disable = false, int inst = -1) {
  auto d = describePlatform(v, {inst, -1, -1});
  if (!d) return d.take_error();
  return synthesizeSystemXml(*d, s, disable);
}

NodeShare share(std::vector<int> devices, std::vector<int> cores) {
  NodeShare s;
  for (size_t i = 0; i < devices.size(); ++i) s.ranks.push_back(static_cast<int>(i));
  s.nRanks = static_cast<int>(devices.size());
  s.devices = std::move(devices);
  s.cores = std::move(cores);
  return s;
}

TEST(NeuronSynthesize, ForbiddenLocalDeviceCountNamesTheRule) {
  const NodeShare s = share({0, 1, 2}, {0, 0, 0});
  auto r = synth(Variant::Trn2, s);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("expects 1, 4, 8, or 16 local devices but got 3"),
            std::string::npos)
      << r.error().message;
  EXPECT_TRUE(synth(Variant::Trn2, s, /*disable=*/true)) << "disable_verify skips the rule";
}

TEST(NeuronSynthesize, MissingDeviceUsesTheSpecMessage) {
  auto r = synth(Variant::Trn2, share({0, 1, 2, 17}, {0, 0, 0, 0}));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("Devices with IDs 17 and 17 are part of topology but devices "
                                   "with those IDs are missing"),
            std::string::npos)
      << r.error().message;
  // Verification off: still an error, now from the range check.
  auto off = synth(Variant::Trn2, share({0, 1, 2, 17}, {0, 0, 0, 0}), true);
  ASSERT_FALSE(off);
  EXPECT_NE(off.error().message.find("devices 0..15"), std::string::npos) << off.error().message;
}

TEST(NeuronSynthesize, MoreRanksThanCoresAndSharedCoresAreErrors) {
  auto r = synth(Variant::Trn1, share({0, 0, 0}, {0, 1, 1}), false, 1);  // trn1.2xlarge: 2 cores
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("3 local ranks but only 2 NeuronCores"), std::string::npos)
      << r.error().message;
  auto dup = synth(Variant::Trn1, share({0, 0}, {1, 1}), false, 1);
  ASSERT_FALSE(dup);
  EXPECT_NE(dup.error().message.find("twice"), std::string::npos) << dup.error().message;
  auto core = synth(Variant::Trn2, share({0}, {4}));  // LNC 2: cores 0..3
  ASSERT_FALSE(core);
  EXPECT_NE(core.error().message.find("core 4 of device 0"), std::string::npos)
      << core.error().message;
}

TEST(NeuronSynthesize, MalformedShareIsAnError) {
  NodeShare s = share({0}, {0});
  s.ranks = {5};  // outside [0, nRanks = 1)
  auto r = synth(Variant::Trn2, s);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("outside [0, 1)"), std::string::npos) << r.error().message;
  NodeShare empty;
  EXPECT_FALSE(synth(Variant::Trn2, empty));
}

}  // namespace
}  // namespace nccom::topo_neuron
