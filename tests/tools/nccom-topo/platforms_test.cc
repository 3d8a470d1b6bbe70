// nccom-topo reads the topology plugins' list_platforms and describe_node
// answers like any plugin text: a well-formed answer becomes the tool's
// platform entries and node model; every malformed one is an error naming
// the plugin and what is wrong, never a crash or a half-read platform.
#include "topo_tool.h"

#include <gtest/gtest.h>

#include <string>

namespace nccom::topotool {
namespace {

const std::string kRow =
    "name=\"box\" codename=\"BOX\" generation=\"v9\" instance_family=\"5\" instance_size=\"9\" "
    "arch_name=\"trn2\" device_revision=\"v9\" pod_type=\"1\" pod_size=\"4\" devices=\"1,4\" "
    "default_devices=\"4\" lnc=\"1,2\" default_lnc=\"2\"";

std::string platforms(const std::string& row) {
  return "<platforms><platform " + row + "/></platforms>";
}

std::string with(std::string row, const std::string& from, const std::string& to) {
  const auto at = row.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? row : row.replace(at, from.size(), to);
}

std::string platform_error(const std::string& xml) {
  auto parsed = parse_platforms(xml, "demo");
  EXPECT_FALSE(parsed.ok()) << xml;
  return parsed.ok() ? "" : parsed.error().message;
}

TEST(ToolsTopoPlatforms, AListedPlatformBecomesAMachine) {
  auto parsed = parse_platforms(platforms(kRow), "demo");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  ASSERT_EQ(parsed->size(), 1u);
  const PlatformEntry& e = parsed->front();
  EXPECT_EQ(e.name, "box");
  EXPECT_EQ(e.codename, "BOX");
  EXPECT_EQ(e.backend, "demo");
  EXPECT_EQ(e.devices, (std::vector<int>{1, 4}));
  EXPECT_EQ(e.lnc, (std::vector<int>{1, 2}));
  EXPECT_EQ(e.machine.struct_size, sizeof(nccom_topo_machine_t));
  EXPECT_EQ(e.machine.instance_family, 5u);
  EXPECT_STREQ(e.machine.arch_name, "trn2");
  EXPECT_EQ(e.machine.pod_type, 1);
  EXPECT_EQ(e.machine.pod_size, 4);
  EXPECT_EQ(e.machine.device_count, 4);
  EXPECT_EQ(e.machine.vcore_size, 2);
}

TEST(ToolsTopoPlatforms, MalformedListsAreErrorsNamingThePlugin) {
  EXPECT_NE(platform_error("<platforms><platform")
                .find("list_platforms answer of topology "
                      "plugin demo"),
            std::string::npos);
  EXPECT_NE(platform_error("<system/>").find("is <system>, not <platforms>"), std::string::npos);
  EXPECT_NE(platform_error(platforms(with(kRow, "codename=\"BOX\" ", ""))).find("codename"),
            std::string::npos);
  EXPECT_NE(platform_error(platforms(with(kRow, "devices=\"1,4\"", "devices=\"1,four\"")))
                .find("is not a list of integers: \"1,four\""),
            std::string::npos);
  EXPECT_NE(platform_error(platforms(with(kRow, "pod_size=\"4\"", "pod_size=\"99999999999\"")))
                .find("pod_size"),
            std::string::npos);
  EXPECT_NE(platform_error(platforms(with(kRow, "default_lnc=\"2\"", "default_lnc=\"3\"")))
                .find("its default devices or LNC is not one of its own"),
            std::string::npos);
  EXPECT_NE(platform_error(platforms(with(kRow, "arch_name=\"trn2\"",
                                          "arch_name=\"an-arch-name-of-20-bytes\"")))
                .find("is longer than 15 bytes"),
            std::string::npos);
  const std::string twice =
      "<platforms><platform " + kRow + "/><platform " + kRow + "/></platforms>";
  EXPECT_NE(platform_error(twice).find("names platform \"box\" twice"), std::string::npos);
}

const std::string kNode =
    "<node platform=\"box\" devices=\"2\" cores_per_device=\"2\" lnc=\"1\" "
    "vcores_per_device=\"2\">"
    "<device id=\"0\" mla=\"0\" numa=\"0\" pci_switch=\"0\" vcores=\"0,1\"/>"
    "<device id=\"1\" mla=\"1\" numa=\"0\" pci_switch=\"1\" vcores=\"2,3\"/>"
    "<nic id=\"0\" numa=\"0\" pci_switch=\"0\" devices=\"0,1\"/>"
    "<link a=\"0\" b=\"1\" locality=\"SharedMemory\"/>"
    "</node>";

std::string node_error(const std::string& xml) {
  auto parsed = parse_node(xml, "demo");
  EXPECT_FALSE(parsed.ok()) << xml;
  return parsed.ok() ? "" : parsed.error().message;
}

TEST(ToolsTopoPlatforms, ADescribedNodeBecomesTheModel) {
  auto parsed = parse_node(kNode, "demo");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->platform, "box");
  EXPECT_EQ(parsed->n_vcores(), 4);
  ASSERT_EQ(parsed->devices.size(), 2u);
  EXPECT_EQ(parsed->devices[1].vcores, (std::vector<int>{2, 3}));
  ASSERT_EQ(parsed->nics.size(), 1u);
  EXPECT_EQ(parsed->nics[0].devices, (std::vector<int>{0, 1}));
  ASSERT_EQ(parsed->links.size(), 1u);
  EXPECT_EQ(parsed->links[0].locality, "SharedMemory");
}

TEST(ToolsTopoPlatforms, AnInconsistentNodeIsAnErrorNamingThePlugin) {
  EXPECT_NE(node_error("<node").find("describe_node answer of topology plugin demo"),
            std::string::npos);
  EXPECT_NE(node_error(with(kNode, "devices=\"2\"", "devices=\"3\""))
                .find("says 3 devices of 2 logical cores and lists 2 <device> elements"),
            std::string::npos);
  EXPECT_NE(node_error(with(kNode, "<link a=\"0\" b=\"1\"", "<link a=\"0\" b=\"7\""))
                .find("links devices 0 and 7 of a node with 2"),
            std::string::npos);
  EXPECT_NE(node_error(with(kNode, "devices=\"0,1\"", "devices=\"0,-1\""))
                .find("puts nic 0 next to a device the node lacks"),
            std::string::npos);
  EXPECT_NE(node_error(with(kNode, " mla=\"1\"", "")).find("mla"), std::string::npos);
  EXPECT_NE(node_error(with(kNode, "vcores=\"2,3\"", "vcores=\"2,,3\""))
                .find("is not a list of integers"),
            std::string::npos);
}

}  // namespace
}  // namespace nccom::topotool
