// The emulated hosts of a run asked of libnccom's own topology code and
// plugins (the configuration and topology plugins this build installs), as
// neuronBuildGraphComm asks: which host counts pass, which is refused and
// in whose words.
#include "shape_check.h"

#include "topo_tool.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace nccom::nccomtest {
namespace {

std::filesystem::path here() { return topotool::tool_dir("tools_nccom_test_tests"); }

TEST(NccomTestShapes, HostsTheTopologyDescribesPass) {
  EXPECT_FALSE(refuse_host_shapes({3, 3, 2}, DeviceCount::OnePerRank, here()));
  EXPECT_FALSE(refuse_host_shapes({16, 8, 1}, DeviceCount::OnePerRank, here()));
}

TEST(NccomTestShapes, TheFirstHostItDoesNotDescribeIsNamed) {
  const auto refused = refuse_host_shapes({4, 4, 5, 6}, DeviceCount::OnePerRank, here());
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->host, 2);
  EXPECT_EQ(refused->ranks, 5);
  EXPECT_EQ(refused->devices, 5);
  EXPECT_NE(refused->why.find("platform emu has no instance with 5 devices (it has 1, 2, 3, 4, "
                              "8, 16)"),
            std::string::npos)
      << refused->why;
  // Each plugin's name and reason, apart, in the order the plugins were asked.
  ASSERT_EQ(refused->declined.size(), 2u);
  EXPECT_EQ(refused->declined[0].backend, "neuron");
  EXPECT_EQ(refused->declined[1].backend, "nccl");
  for (const auto& d : refused->declined) {
    EXPECT_NE(refused->why.find(d.backend + ": " + d.why), std::string::npos) << d.why;
  }
  const std::string line = refusal_text(*refused, "-r 19 -N 4");
  EXPECT_EQ(line.rfind("-r 19 -N 4 puts 5 ranks on emulated host 2: neuron: topo_neuron: platform "
                       "emu has no instance with 5 devices",
                       0),
            0u)
      << line;
  EXPECT_EQ(line.find('\n'), std::string::npos);
  // The other plugin by its name only; one line of about 200 bytes.
  EXPECT_TRUE(line.ends_with("; topology plugin nccl declines too: choose other -r and -N"))
      << line;
  EXPECT_LE(line.size(), 200u) << line;
}

// Under a launcher the device count is the runtime's: NEURON_RT_EMU_DEVICES
// when set, whatever the ranks per host.
TEST(NccomTestShapes, UnderALauncherTheRuntimeCountsTheDevices) {
  EXPECT_TRUE(refuse_host_shapes({5}, DeviceCount::Runtime, here()));
  ::setenv("NEURON_RT_EMU_DEVICES", "4", 1);
  const auto with_four = refuse_host_shapes({5}, DeviceCount::Runtime, here());
  ::unsetenv("NEURON_RT_EMU_DEVICES");
  EXPECT_FALSE(with_four) << with_four->why;
}

}  // namespace
}  // namespace nccom::nccomtest
