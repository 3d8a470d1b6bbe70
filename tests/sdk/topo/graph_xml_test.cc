// TopoGraphXml: <graphs> XML <-> TopoGraph on the PCIe host fixture (devs
// 0..7 are ranks 8..15, so every dev -> rank translation is visible).
#include "topo_test_util.h"

#include <nccom/topo/graph_xml.h>

namespace nccom::topo::test {
namespace {

std::string channelXml(const std::vector<int>& devs, int netIn, int netOut) {
  std::string s = "<channel>";
  if (netIn >= 0) s += "<net dev='" + std::to_string(netIn) + "'/>";
  for (int d : devs) s += "<gpu dev='" + std::to_string(d) + "'/>";
  if (netOut >= 0) s += "<net dev='" + std::to_string(netOut) + "'/>";
  return s + "</channel>";
}

const std::vector<int> kForward{0, 1, 2, 3, 4, 5, 6, 7};
const std::vector<int> kBackward{7, 6, 5, 4, 3, 2, 1, 0};

std::string graphXml(const std::string& attrs, const std::string& channels) {
  return "<graph " + attrs + ">" + channels + "</graph>";
}

constexpr const char* kRingAttrs =
    "id='0' pattern='4' crossnic='0' nchannels='2' speedintra='24' speedinter='12' typeintra='PXB' "
    "typeinter='PXB' samechannels='1'";

std::string twoChannels() { return channelXml(kForward, 0, 0) + channelXml(kBackward, 1, 1); }

Result<int> load(const std::string& graphsBody, const TopoSystem& sys, TopoGraph& graph,
                 int version = 1) {
  auto doc =
      parseXml("<graphs version='" + std::to_string(version) + "'>" + graphsBody + "</graphs>");
  if (!doc.ok()) return doc.take_error();
  return graphFromXml(*doc, sys, graph);
}

TEST(TopoGraphXml, LoadsChannelsTranslatingDevToRank) {
  const TopoSystem sys = pcieHost();
  TopoGraph g;
  auto n = load(graphXml(kRingAttrs, twoChannels()), sys, g);
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_EQ(*n, 2);
  EXPECT_EQ(g.nChannels, 2);
  EXPECT_EQ(g.nLocal, 8);
  EXPECT_EQ(g.intra,
            (std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15, 15, 14, 13, 12, 11, 10, 9, 8}));
  ASSERT_EQ(g.inter.size(), 2u);
  EXPECT_EQ(g.inter[0], (std::array<int, 2>{0, 0}));
  EXPECT_EQ(g.inter[1], (std::array<int, 2>{1, 1}));
  EXPECT_EQ(g.channel(1)[0], 15);
  EXPECT_EQ(g.pattern, SearchPattern::Ring);
  EXPECT_EQ(g.crossNic, 0);
  EXPECT_FLOAT_EQ(g.speedIntra, 24.0F);
  EXPECT_FLOAT_EQ(g.speedInter, 12.0F);
  EXPECT_EQ(g.typeIntra, PathType::PXB);
  EXPECT_EQ(g.typeInter, PathType::PXB);
  EXPECT_EQ(g.sameChannels, 1);
}

TEST(TopoGraphXml, WriterLayoutIsExact) {
  const TopoSystem sys = mustBuild(R"(<system><cpu numaid="0">
    <pci busid="01:00.0"><gpu dev="3" rank="0"/></pci><pci busid="02:00.0"><gpu dev="5" rank="1"/></pci>
    </cpu></system>)");
  TopoGraph g;
  g.id = 1;
  g.nChannels = 1;
  g.nLocal = 2;
  g.intra = {1, 0};
  g.inter = {{0, 0}};
  g.speedIntra = 10.5F;
  g.speedInter = 0.1F;
  g.typeIntra = PathType::PIX;
  g.typeInter = PathType::SYS;
  auto doc = graphsToXml({&g}, sys);
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  // No NET nodes in this system: no <net> entries.
  EXPECT_EQ(writeXml(*doc->root),
            "<graphs version=\"1\">\n"
            "  <graph id=\"1\" pattern=\"4\" crossnic=\"2\" nchannels=\"1\" speedintra=\"10.5\" "
            "speedinter=\"0.1\" "
            "typeintra=\"PIX\" typeinter=\"SYS\" samechannels=\"1\">\n"
            "    <channel>\n"
            "      <gpu dev=\"5\"/>\n"
            "      <gpu dev=\"3\"/>\n"
            "    </channel>\n"
            "  </graph>\n"
            "</graphs>\n");
}

TEST(TopoGraphXml, RoundTripGraphToXmlToGraph) {
  const TopoSystem sys = pcieHost();
  TopoGraph first;
  ASSERT_TRUE(load(graphXml(kRingAttrs, twoChannels()), sys, first).ok());
  auto doc = graphsToXml({&first}, sys);
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  const std::string text = writeXml(*doc->root);
  auto reparsed = parseXml(text);
  ASSERT_TRUE(reparsed.ok());
  TopoGraph second;
  auto n = graphFromXml(*reparsed, sys, second);
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_EQ(*n, 2);
  EXPECT_EQ(second.intra, first.intra);
  EXPECT_EQ(second.inter, first.inter);
  EXPECT_EQ(second.nChannels, first.nChannels);
  EXPECT_EQ(second.speedIntra, first.speedIntra);
  EXPECT_EQ(second.speedInter, first.speedInter);
  EXPECT_EQ(second.typeIntra, first.typeIntra);
  EXPECT_EQ(second.typeInter, first.typeInter);
  EXPECT_EQ(second.crossNic, first.crossNic);
  EXPECT_EQ(second.sameChannels, first.sameChannels);
  // And the text is stable.
  EXPECT_EQ(writeXml(*graphsToXml({&second}, sys)->root), text);
  EXPECT_NE(text.find("<net dev=\"1\"/>\n      <gpu dev=\"7\"/>"), std::string::npos);
}

TEST(TopoGraphXml, GraphWithAnotherIdIsSkipped) {
  const TopoSystem sys = pcieHost();
  TopoGraph g;
  g.id = 1;
  auto n = load(graphXml(kRingAttrs, twoChannels()), sys, g);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 0);
  EXPECT_EQ(g.nChannels, 0);
  EXPECT_TRUE(g.intra.empty());
}

TEST(TopoGraphXml, CrossNicGraphSkippedWhenTheRequestForbidsIt) {
  const TopoSystem sys = pcieHost();
  const std::string cross = graphXml(
      "id='0' pattern='4' crossnic='1' speedintra='24' speedinter='12' typeintra='PXB' "
      "typeinter='PXB' samechannels='0'",
      channelXml(kForward, 0, 1));
  TopoGraph strict;
  strict.crossNic = 0;
  EXPECT_EQ(*load(cross, sys, strict), 0);
  EXPECT_EQ(strict.crossNic, 0);
  TopoGraph autoNic;  // crossNic 2 = auto
  EXPECT_EQ(*load(cross, sys, autoNic), 1);
  EXPECT_EQ(autoNic.crossNic, 1);
  EXPECT_EQ(autoNic.inter[0], (std::array<int, 2>{0, 1}));
  EXPECT_EQ(autoNic.sameChannels, 0);
}

TEST(TopoGraphXml, FirstMatchingGraphAfterSkipsAndLastMatchWins) {
  const TopoSystem sys = pcieHost();
  const std::string other = graphXml(
      "id='1' pattern='4' crossnic='0' speedintra='1' speedinter='1' typeintra='SYS' "
      "typeinter='SYS' samechannels='0'",
      channelXml(kForward, 0, 0));
  const std::string single = graphXml(
      "id='0' pattern='4' crossnic='0' speedintra='6' speedinter='6' typeintra='SYS' "
      "typeinter='SYS' samechannels='0'",
      channelXml(kBackward, 1, 0));
  TopoGraph g;
  EXPECT_EQ(*load(other + graphXml(kRingAttrs, twoChannels()) + single, sys, g), 1);
  EXPECT_FLOAT_EQ(g.speedIntra, 6.0F);
  EXPECT_EQ(g.intra, (std::vector<int>{15, 14, 13, 12, 11, 10, 9, 8}));
  EXPECT_EQ(g.inter, (std::vector<std::array<int, 2>>{{1, 0}}));
}

struct BadGraph {
  const char* name;
  std::string body;
  std::string message;
};

class TopoGraphXmlErrors : public ::testing::TestWithParam<BadGraph> {};

TEST_P(TopoGraphXmlErrors, ErrorLeavesTheGraphUnchanged) {
  const TopoSystem sys = pcieHost();
  TopoGraph g;
  g.nChannels = 0;
  auto n = load(GetParam().body, sys, g);
  ASSERT_FALSE(n.ok());
  EXPECT_TRUE(contains(n.error().message, GetParam().message));
  EXPECT_EQ(g.nChannels, 0);
  EXPECT_TRUE(g.intra.empty());
}

std::string manyChannels(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += channelXml(kForward, 0, 0);
  return s;
}

const char* kAttrsNoCount =
    "id='0' pattern='4' crossnic='0' speedintra='24' speedinter='12' typeintra='PXB' "
    "typeinter='PXB' samechannels='1'";

INSTANTIATE_TEST_SUITE_P(
    TopoGraphXml, TopoGraphXmlErrors,
    ::testing::Values(
        BadGraph{"TooManyChannels", graphXml(kAttrsNoCount, manyChannels(33)),
                 "graph has 33 channels, at most 32"},
        BadGraph{"TooFewGpus",
                 graphXml(kAttrsNoCount,
                          channelXml(kForward, 0, 0) + channelXml({0, 1, 2, 3, 4, 5, 6}, 0, 0)),
                 "channel 1 lists 7 gpus, expected 8 (one per local rank)"},
        BadGraph{"TooManyGpus",
                 graphXml(kAttrsNoCount, channelXml({0, 1, 2, 3, 4, 5, 6, 7, 0}, 0, 0)),
                 "channel 0 lists more than 8 gpus (the system has 8)"},
        BadGraph{"ThreeNets",
                 graphXml(kAttrsNoCount,
                          "<channel><net dev='0'/><net dev='0'/><net dev='1'/></channel>"),
                 "channel 0 lists more than 2 <net> entries"},
        BadGraph{"UnknownDev", graphXml(kAttrsNoCount, channelXml({0, 1, 2, 3, 4, 5, 6, 42}, 0, 0)),
                 "XML Import Channel : dev 42 not found."},
        BadGraph{
            "BadPathType",
            graphXml(
                "id='0' pattern='4' crossnic='0' speedintra='1' speedinter='1' typeintra='FAST' "
                "typeinter='SYS' samechannels='0'",
                ""),
            "attribute 'typeintra'='FAST' is not a path type (LOC NVL NVB PIX PXB PHB SYS)"},
        BadGraph{"NchannelsDisagrees", graphXml(kRingAttrs, channelXml(kForward, 0, 0)),
                 "nchannels=2 but 1 <channel> elements"},
        BadGraph{
            "MissingSpeed",
            graphXml(
                "id='0' pattern='4' crossnic='0' speedinter='1' typeintra='SYS' typeinter='SYS' "
                "samechannels='0'",
                ""),
            "attribute 'speedintra' of <graph> at line 1:21: missing"},
        BadGraph{
            "BadPattern",
            graphXml(
                "id='0' pattern='9' crossnic='0' speedintra='1' speedinter='1' typeintra='SYS' "
                "typeinter='SYS' samechannels='0'",
                ""),
            "attribute 'pattern'=9 outside [1, 4]"},
        BadGraph{"NotAChannel", graphXml(kAttrsNoCount, "<ring/>"),
                 "a <graph> holds only <channel> elements"},
        BadGraph{"NotAGraph", "<graph_x/>", "a <graphs> holds only <graph> elements"},
        BadGraph{"ChannelChildUnknown",
                 graphXml(kAttrsNoCount, "<channel><cpu dev='0'/></channel>"),
                 "a <channel> holds only <net> and <gpu> elements"}),
    [](const ::testing::TestParamInfo<BadGraph>& info) { return std::string(info.param.name); });

TEST(TopoGraphXml, WrongVersionMessage) {
  const TopoSystem sys = pcieHost();
  TopoGraph g;
  auto n = load(graphXml(kRingAttrs, twoChannels()), sys, g, 2);
  EXPECT_EQ(errorOf(n),
            "graph XML <graphs> at <string>:1:1: XML Graph has wrong version 2, 1 needed");
  auto doc = parseXml("<system/>");
  EXPECT_EQ(errorOf(graphFromXml(*doc, sys, g)),
            "graph XML <system> at <string>:1:1: root element is <system>, expected <graphs>");
}

TEST(TopoGraphXml, WriterErrors) {
  const TopoSystem sys = pcieHost();
  TopoGraph g;
  g.nChannels = 1;
  g.nLocal = 8;
  g.intra = {8, 9, 10, 11, 12, 13, 14, 99};
  g.inter = {{0, 0}};
  EXPECT_EQ(
      errorOf(graphsToXml({&g}, sys)),
      "graph XML writer (graph id 0): channel 0 names rank 99, which is no GPU of this system");
  g.nChannels = 33;
  EXPECT_EQ(errorOf(graphsToXml({&g}, sys)),
            "graph XML writer (graph id 0): 33 channels, at most 32");
  g.nChannels = 1;
  g.nLocal = 7;
  EXPECT_EQ(errorOf(graphsToXml({&g}, sys)),
            "graph XML writer (graph id 0): nLocal is 7 but the system has 8 GPUs");
  g.nLocal = 8;
  g.nChannels = 2;
  EXPECT_EQ(
      errorOf(graphsToXml({&g}, sys)),
      "graph XML writer (graph id 0): intra/inter hold fewer entries than nChannels x nLocal");
  XmlNode graphNode("graph");
  EXPECT_EQ(errorOf(appendChannelXml(graphNode, g, 5, sys)),
            "graph XML writer (graph id 0): channel 5 is outside intra/inter");
  g.intra.back() = 15;
  ASSERT_TRUE(appendChannelXml(graphNode, g, 0, sys));
  ASSERT_EQ(graphNode.children().size(), 1u);
  const XmlNode& ch = *graphNode.children()[0];
  ASSERT_EQ(ch.children().size(), 10u);  // net, 8 gpus, net
  EXPECT_EQ(ch.children()[0]->name(), "net");
  EXPECT_EQ(*ch.children()[8]->getInt("dev"), 7);  // rank 15 is dev 7
}

}  // namespace
}  // namespace nccom::topo::test
