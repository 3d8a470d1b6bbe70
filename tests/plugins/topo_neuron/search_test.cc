// Suite NeuronSearch: hand-checked behaviours of the priority DFS and of the
// device -> core expansion, and its errors. The platform matrix is in
// search_matrix_test.cc.
#include "topo_neuron/search.h"

#include <gtest/gtest.h>

namespace nccom::topo_neuron {
namespace {

// n single-vcore devices, the given links and MLA of each device.
PlatformDescription custom(int n, std::vector<LinkDesc> links, std::vector<int> mla = {}) {
  PlatformDescription d;
  d.variant = Variant::Emu;
  d.platform = Platform::Emu;
  d.name = "custom";
  d.nDevices = n;
  d.coresPerDevice = 1;
  d.vcoresPerDevice = 1;
  d.senginesPerMla = 2;
  for (int i = 0; i < n; ++i) {
    d.devices.push_back({i, mla.empty() ? i : mla[static_cast<size_t>(i)], 0, 0});
    d.vcores.push_back({i, i, 0, 1, 0});
  }
  d.links = std::move(links);
  return d;
}

Result<SearchResult> search(const PlatformDescription& d, int nDevices, int max,
                            uint64_t budget = kDefaultSearchBudget) {
  auto req = makeRequest(d, firstDevices(d, nDevices), max);
  req.budget = budget;
  return getPaths(d, req);
}

constexpr auto kC2C = EdgeLocality::RemoteMLA;
constexpr auto kSw = EdgeLocality::RMTV;

TEST(NeuronSearch, LocalityBreaksTiesBeforeDeviceIds) {
  // K4 whose C2C links form the ring 0-2-1-3-0; 0-1 and 2-3 are switch hops.
  auto d =
      custom(4, {{0, 1, kSw}, {2, 3, kSw}, {0, 2, kC2C}, {2, 1, kC2C}, {1, 3, kC2C}, {3, 0, kC2C}});
  auto r = search(d, 4, 1);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->devicePaths, (PathContainer{{0, 2, 1, 3}}));
}

TEST(NeuronSearch, SecondRingAvoidsTheDirectedLinksOfTheFirst) {
  auto d =
      custom(4, {{0, 1, kSw}, {2, 3, kSw}, {0, 2, kC2C}, {2, 1, kC2C}, {1, 3, kC2C}, {3, 0, kC2C}});
  auto r = search(d, 4, 2);
  ASSERT_TRUE(r) << r.error().message;
  // The same C2C ring the other way round: every link used in its free direction.
  EXPECT_EQ(r->devicePaths, (PathContainer{{0, 2, 1, 3}, {0, 3, 1, 2}}));
}

TEST(NeuronSearch, RingOfTwelveHasExactlyTwoDirections) {
  auto d = describePlatform(Variant::Inf2, {12, 1, -1});
  auto r = search(*d, 12, 8);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->devicePaths.size(), 2u);
  EXPECT_EQ(r->devicePaths[0], (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(r->devicePaths[1], (std::vector<int>{0, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1}));
}

TEST(NeuronSearch, MlaBlocksStayContiguous) {
  // Two MLAs of three devices; the cheapest links lead out of the MLA, but a
  // node may leave only once its MLA is fully on the path.
  std::vector<LinkDesc> links;
  const std::vector<int> mla = {0, 0, 0, 1, 1, 1};
  for (int a = 0; a < 6; ++a)
    for (int b = a + 1; b < 6; ++b)
      links.push_back({a, b, mla[a] == mla[b] ? EdgeLocality::D2D : EdgeLocality::SharedMemory});
  auto d = custom(6, links, mla);
  auto r = search(d, 6, 8);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->devicePaths.front(), (std::vector<int>{0, 1, 2, 3, 4, 5}));
  for (const auto& ring : r->devicePaths) {
    int changes = 0;
    for (size_t i = 0; i < ring.size(); ++i)
      changes += mla[ring[i]] != mla[ring[(i + 1) % ring.size()]];
    EXPECT_EQ(changes, 2) << formatList(ring);
  }
}

TEST(NeuronSearch, NoRingOverTorusSubsetIsAnError) {
  // Device 4 touches only device 0 among {0..4} on the 4x4 torus.
  auto d = describePlatform(Variant::Trn2);
  auto r = search(*d, 5, 1);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "no ring over the platform links for devices {0, 1, 2, 3, 4}");
}

TEST(NeuronSearch, NoRingFoundByFullSearch) {
  // A bow tie: every degree >= 2, yet no Hamiltonian cycle.
  auto d = custom(
      5, {{0, 1, kC2C}, {1, 2, kC2C}, {2, 0, kC2C}, {2, 3, kC2C}, {3, 4, kC2C}, {4, 2, kC2C}});
  auto r = search(d, 5, 1);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "no ring over the platform links for devices {0, 1, 2, 3, 4}");
}

TEST(NeuronSearch, Inf2HalfRingHasNoRing) {
  auto d = describePlatform(Variant::Inf2, {12, 1, -1});
  auto r = search(*d, 6, 1);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("no ring over the platform links"), std::string::npos);
}

TEST(NeuronSearch, SwitchV1ReachesWhatTheTorusCannot) {
  auto d = describePlatform(Variant::Trn3SwitchV1);
  auto r = search(*d, 5, 1);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->devicePaths.front().size(), 5u);
}

TEST(NeuronSearch, TinyBudgetIsAnErrorNotAHang) {
  auto d = describePlatform(Variant::Trn2);
  auto r = search(*d, 16, 1, 3);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("search budget of 3 steps exhausted"), std::string::npos)
      << r.error().message;
}

TEST(NeuronSearch, DefaultBudgetBoundsAHopelessSearch) {
  // Complete bipartite 7 x 9: all degrees >= 7, no Hamiltonian cycle (the
  // sides differ in size), and far too many paths to enumerate.
  std::vector<LinkDesc> links;
  for (int a = 0; a < 7; ++a)
    for (int b = 7; b < 16; ++b) links.push_back({a, b, kC2C});
  auto d = custom(16, links);
  auto r = search(d, 16, 1);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("budget"), std::string::npos) << r.error().message;
}

TEST(NeuronSearch, BudgetRunningOutAfterARingKeepsTheRings) {
  auto d = describePlatform(Variant::Inf2, {12, 1, -1});
  auto all = search(*d, 12, 1);
  ASSERT_TRUE(all);
  const uint64_t firstRingSteps = all->stats.steps;
  auto r = search(*d, 12, 8, firstRingSteps + 2);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->devicePaths.size(), 1u);
  EXPECT_TRUE(r->stats.budgetExhausted);
}

TEST(NeuronSearch, CoreOrderFollowsGrayCodeOfSEngines) {
  auto d = describePlatform(Variant::Trn2, {16, 1, -1});
  // SEngines of vcores 0..7 are 0,0,1,1,2,2,3,3; Gray order 0,1,3,2.
  EXPECT_EQ(deviceCoreOrder(*d, 0, firstDevices(*d, 1)),
            (std::vector<int>{0, 1, 2, 3, 6, 7, 4, 5}));
  EXPECT_EQ(deviceCoreOrder(*d, 1, firstDevices(*d, 2)),
            (std::vector<int>{8, 9, 10, 11, 14, 15, 12, 13}));
}

TEST(NeuronSearch, SingleVcorePerDeviceGivesOneCorePerHop) {
  auto d = describePlatform(Variant::Trn2, {16, 2, -1});
  VcoreSet avail;
  for (int dev = 0; dev < 4; ++dev) avail.set(static_cast<size_t>(dev * 4 + 3));  // SEngine 3
  auto r = getPaths(*d, makeRequest(*d, avail, 1));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->devicePaths.front(), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(r->corePaths.front(), (std::vector<int>{3, 7, 11, 15}));
}

TEST(NeuronSearch, RequestErrors) {
  auto d = describePlatform(Variant::Trn2);  // 64 vcores at LNC 2
  VcoreSet beyond;
  beyond.set(100);
  auto a = getPaths(*d, makeRequest(*d, beyond, 1));
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().message.find("vcore 100 is not on platform trn2"), std::string::npos);
  auto b = getPaths(*d, makeRequest(*d, VcoreSet{}, 1));
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("no available vcores"), std::string::npos);
  auto c = getPaths(*d, makeRequest(*d, firstDevices(*d, 4), 33));
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("max 33 out of range"), std::string::npos);
  auto req = makeRequest(*d, firstDevices(*d, 4), 1);
  req.ncPerVcore = 1;
  auto e = getPaths(*d, req);
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message.find("does not match platform trn2"), std::string::npos);
}

TEST(NeuronSearch, EdgePriorityStepsAreBounded) {
  NeuronEdge e;
  e.priority = kMaxPriority;
  EXPECT_FALSE(e.tryIncreasePriority(0, kMaxPriority));
  e.priority = 3;
  EXPECT_FALSE(e.tryIncreasePriority(kInitialPriority, kMaxPriority));  // below the floor
  e.intraMla = false;
  e.decreasePriority();
  EXPECT_EQ(e.priority, 0);  // clamped
  e.priority = kInitialPriority;
  e.intraMla = true;
  e.decreasePriority();
  EXPECT_EQ(e.priority, kInitialPriority - kIntraMlaPenalty);
}

}  // namespace
}  // namespace nccom::topo_neuron

namespace nccom::topo_neuron {
namespace {

TEST(NeuronSearch, VcoresFromIds) {
  auto s = vcoresFromIds({0, 5, 127});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->count(), 3u);
  EXPECT_TRUE(s->test(127));
  auto a = vcoresFromIds({128});
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().message.find("vcore id 128 outside [0, 128)"), std::string::npos);
  auto b = vcoresFromIds({3, 3});
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("listed twice"), std::string::npos);
  EXPECT_FALSE(vcoresFromIds({-1}));
}

}  // namespace
}  // namespace nccom::topo_neuron

#include <random>

namespace nccom::topo_neuron {
namespace {

// Random link graphs and MLA groupings (fixed seed): the search always ends
// in valid rings or in one of its two errors, never a crash or a hang.
TEST(NeuronSearch, RandomGraphsEndInRingsOrAnError) {
  std::mt19937 rng(20261130);
  int rings = 0;
  int errors = 0;
  for (int iter = 0; iter < 300; ++iter) {
    const int n = 1 + static_cast<int>(rng() % 16);
    const int density = 10 + static_cast<int>(rng() % 80);  // percent
    std::vector<LinkDesc> links;
    for (int a = 0; a < n; ++a)
      for (int b = a + 1; b < n; ++b)
        if (static_cast<int>(rng() % 100) < density)
          links.push_back({a, b, static_cast<EdgeLocality>(rng() % 5)});
    std::vector<int> mla;
    const int groupSize = 1 + static_cast<int>(rng() % 3);
    for (int i = 0; i < n; ++i) mla.push_back(i / groupSize);
    auto d = custom(n, links, mla);
    auto r = search(d, n, 1 + static_cast<int>(rng() % 4), 20000);
    if (!r) {
      ++errors;
      const auto& m = r.error().message;
      EXPECT_TRUE(m.find("no ring over the platform links") != std::string::npos ||
                  m.find("budget") != std::string::npos)
          << m;
      continue;
    }
    ++rings;
    for (const auto& ring : r->devicePaths) {
      ASSERT_EQ(static_cast<int>(ring.size()), n);
      int leaves = 0;
      for (size_t i = 0; i < ring.size() && n > 1; ++i) {
        const int a = ring[i];
        const int b = ring[(i + 1) % ring.size()];
        EXPECT_TRUE(d.linked(a, b)) << a << "->" << b;
        leaves += mla[static_cast<size_t>(a)] != mla[static_cast<size_t>(b)];
      }
      // Contiguous MLA blocks: the ring leaves each MLA exactly once.
      const int groups = (n + groupSize - 1) / groupSize;
      EXPECT_EQ(leaves, groups > 1 ? groups : 0) << formatList(ring);
    }
  }
  EXPECT_GT(rings, 0);
  EXPECT_GT(errors, 0);
}

}  // namespace
}  // namespace nccom::topo_neuron
