// NeuronSynthesize.Example*: the checked-in config/topo/*.xml files load with
// sdk/topo as NCCL_TOPO_FILE files and hold the hand-checked device, core
// and NIC counts of one full node; and they are byte-equal to what the
// synthesizer writes today (regenerate with nccom-topo-neuron-examples).
#include "topo_neuron/examples.h"

#include "build_paths.h"
#include "topo_neuron/synthesize.h"

#include <nccom/topo/paths.h>

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

namespace nccom::topo_neuron {
namespace {

const std::string kDir = std::string(NCCOM_SOURCE_DIR) + "/config/topo/";

struct Facts {
  const char* file;
  int devices;
  int cores;  // <gpu> elements: vcores at the file's LNC
  int nics;
  int sm;
};

// Public instance facts and our table (docs/internals/topo-neuron.md):
// trn1.32xlarge 16 devices x 2 cores, 8 EFA; trn1n 16 EFA; inf2.48xlarge 12 x
// 2, no EFA; trn2/trn3 16 chips x 8 cores at LNC 2 = 64, 16 EFA; emu-8 at
// LNC 1 = 16 cores, one NIC per 4 devices.
const Facts kFacts[] = {
    {"trn1.xml", 16, 32, 8, 2},
    {"trn1n.xml", 16, 32, 16, 2},
    {"inf2.xml", 12, 24, 0, 2},
    {"trn2.xml", 16, 64, 16, 3},
    {"trn2-ultraserver.xml", 16, 64, 16, 3},
    {"trn3.xml", 16, 64, 16, 4},
    {"trn3-switch-v1.xml", 16, 64, 16, 4},
    {"emu-8.xml", 8, 16, 2, 1},
};

TEST(NeuronSynthesize, ExampleFilesLoadWithTheExpectedCounts) {
  EXPECT_EQ(std::size(kFacts), exampleSpecs().size());
  for (const auto& f : kFacts) {
    SCOPED_TRACE(f.file);
    auto doc = topo::parseXmlFile(kDir + f.file);
    ASSERT_TRUE(doc) << doc.error().message;
    // A reader learns the per-link width from the generation tag.
    const auto* gpuTag =
        doc->root->findChild("cpu")->findChild("pci")->findChild("pci")->findChild("gpu");
    ASSERT_NE(gpuTag, nullptr);
    auto sm = gpuTag->getInt("sm");
    ASSERT_TRUE(sm) << sm.error().message;
    EXPECT_EQ(*sm, f.sm);
    topo::SystemOptions o;
    o.nvlinkWidth = linkWidthForSm(static_cast<int>(*sm));
    ASSERT_GT(o.nvlinkWidth, 0.0F);
    auto sys = topo::buildSystem(*doc, o);
    ASSERT_TRUE(sys) << sys.error().message;
    EXPECT_EQ(sys->count(topo::NodeType::GPU), f.cores);
    EXPECT_EQ(sys->count(topo::NodeType::NET), f.nics);
    std::set<int64_t> buses;  // device = PCI bus of its cores' busids
    for (const auto& g : sys->of(topo::NodeType::GPU)) {
      buses.insert((g.id >> 12) & 0xff);
      EXPECT_EQ(g.gpu.sm, f.sm);
    }
    EXPECT_EQ(static_cast<int>(buses.size()), f.devices);
    ASSERT_TRUE(topo::computePaths(*sys));
    for (const auto& a : sys->of(topo::NodeType::GPU))
      for (const auto& b : sys->of(topo::NodeType::GPU))
        ASSERT_TRUE(topo::checkP2p(*sys, a.gpu.rank, b.gpu.rank, topo::PathSettings{}));
  }
}

TEST(NeuronSynthesize, ExampleFilesEqualTheSynthesizerOutput) {
  for (const auto& spec : exampleSpecs()) {
    SCOPED_TRACE(spec.file);
    std::ifstream in(kDir + spec.file, std::ios::binary);
    ASSERT_TRUE(in) << "missing " << kDir << spec.file;
    std::stringstream buf;
    buf << in.rdbuf();
    auto text = exampleText(spec);
    ASSERT_TRUE(text) << text.error().message;
    EXPECT_TRUE(buf.str() == *text)
        << spec.file << " drifted from the synthesizer; regenerate with "
        << "nccom-topo-neuron-examples config/topo and review the diff";
  }
}

}  // namespace
}  // namespace nccom::topo_neuron
