// NeuronSearch.PlatformMatrix: every platform x instance size x local
// device count it allows x LNC mode (one test so that ctest starts one
// process, not one per case; each case is named in failure messages).
// Properties, not copied outputs: each path visits every vcore once, each
// device as one contiguous block; every device hop including the closing one
// is a platform link; two runs agree; NICs carry channel counts that differ
// by at most one.
#include "topo_neuron/graph_fill.h"
#include "topo_neuron/search.h"

#include <gtest/gtest.h>

#include <map>
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
  for (const auto& s : platformTable()) {
    for (int inst : s.instanceDevices) {
      for (int lnc : s.lncModes) {
        for (int local : s.localDeviceCounts) {
          if (local > inst) continue;
          // On a ring of devices only the whole ring (or one device) closes;
          // NeuronSearch.Inf2HalfRingHasNoRing holds the error for the rest.
          if (s.layout == LinkLayout::Ring && local != 1 && local != inst) continue;
          out.push_back({s.variant, inst, lnc, local});
        }
      }
    }
  }
  return out;
}

std::string caseName(const Case& c) {
  return std::string(platformSpec(c.variant).name) + " instance=" + std::to_string(c.instance) +
         " lnc=" + std::to_string(c.lnc) + " local=" + std::to_string(c.local);
}

// ASSERTs end this case only; the matrix goes on with the next.
void checkCase(const Case& c) {
  auto d = describePlatform(c.variant, {c.instance, c.lnc, -1});
  ASSERT_TRUE(d) << d.error().message;
  const VcoreSet avail = firstDevices(*d, c.local);
  auto r = getPaths(*d, makeRequest(*d, avail, 4));
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_FALSE(r->corePaths.empty());
  ASSERT_EQ(r->corePaths.size(), r->devicePaths.size());

  for (size_t p = 0; p < r->corePaths.size(); ++p) {
    const auto& cores = r->corePaths[p];
    const auto& devs = r->devicePaths[p];
    // Every available vcore exactly once.
    ASSERT_EQ(cores.size(), avail.count());
    std::set<int> seen(cores.begin(), cores.end());
    ASSERT_EQ(seen.size(), cores.size());
    for (int v : cores) ASSERT_TRUE(avail.test(static_cast<size_t>(v))) << v;
    // Every device once in the device ring; consecutive devices linked.
    ASSERT_EQ(static_cast<int>(devs.size()), c.local);
    ASSERT_EQ(std::set<int>(devs.begin(), devs.end()).size(), devs.size());
    if (devs.size() > 1) {
      for (size_t i = 0; i < devs.size(); ++i) {
        const int a = devs[i];
        const int b = devs[(i + 1) % devs.size()];
        EXPECT_TRUE(d->linked(a, b)) << "hop " << a << "->" << b << " in " << formatList(devs);
      }
    }
    // The core path walks the device ring, one contiguous block per device.
    std::vector<int> blocks;
    for (int v : cores) {
      const int dev = d->vcores[static_cast<size_t>(v)].device;
      if (blocks.empty() || blocks.back() != dev) blocks.push_back(dev);
    }
    EXPECT_EQ(blocks, devs);
  }
  // Distinct rings.
  EXPECT_EQ(std::set<std::vector<int>>(r->devicePaths.begin(), r->devicePaths.end()).size(),
            r->devicePaths.size());

  // Identical across two runs.
  auto again = getPaths(*d, makeRequest(*d, avail, 4));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->corePaths, r->corePaths);

  // Channels over NICs: default count, and an odd count.
  for (int nChannels : {0, 7}) {
    topo::TopoGraph g;
    ASSERT_TRUE(fillTopoGraph(g, *d, *r, {{}, {}, nChannels}));
    ASSERT_EQ(g.intra.size(), static_cast<size_t>(g.nChannels) * avail.count());
    for (int ch = 0; ch < g.nChannels; ++ch) {
      std::set<int> ranks(g.channel(ch), g.channel(ch) + g.nLocal);
      EXPECT_EQ(ranks.size(), static_cast<size_t>(g.nLocal));
      EXPECT_EQ(*ranks.begin(), 0);
      EXPECT_EQ(*ranks.rbegin(), g.nLocal - 1);
    }
    const auto nics = usableNics(*d, r->devices);
    if (nics.empty()) {
      for (const auto& io : g.inter) EXPECT_EQ(io, (std::array<int, 2>{-1, -1}));
      continue;
    }
    std::map<int, int> perNic;
    for (int n : nics) perNic[n] = 0;
    for (const auto& io : g.inter) {
      EXPECT_EQ(io[0], io[1]);
      ASSERT_TRUE(perNic.count(io[0])) << io[0];
      ++perNic[io[0]];
    }
    int lo = g.nChannels;
    int hi = 0;
    for (const auto& [nic, n] : perNic) {
      lo = std::min(lo, n);
      hi = std::max(hi, n);
    }
    EXPECT_LE(hi - lo, 1) << "channels " << g.nChannels;
  }
}

TEST(NeuronSearch, PlatformMatrix) {
  const auto cases = allCases();
  // Counted by hand from the platform table (docs/internals/topo-neuron.md):
  // 44 for the hardware rows; emu has 6 sizes x 2 LNC modes with
  // 1+2+3+4+5+6 = 21 local counts each (42).
  EXPECT_EQ(cases.size(), 86u);
  for (const Case& c : cases) {
    SCOPED_TRACE(caseName(c));
    checkCase(c);
  }
}

}  // namespace
}  // namespace nccom::topo_neuron
