// nccom-plugin-check over the third-party plugin: it reads the layout from
// NCCOM_NET_PLUGIN_LAYOUT as the host does, and the v4 build (blocking
// connect/accept by contract) conforms.
#include "child_process.h"

#include <gtest/gtest.h>

#include <string>

namespace {

const std::string kTool = std::string(NCCOM_BUILD_DIR) + "/bin/nccom-plugin-check";
const std::string kNvidia = std::string(TPN_PLUGIN_DIR) + "/libtpn-nvidia_v6.so";

std::string output(const nccom_test::ChildResult& r) { return r.out + r.err; }

TEST(ThirdPartyNetPluginCheck, TheLayoutComesFromTheEnvironmentAsInTheHost) {
  const auto nvidia = nccom_test::run_child(kTool, {"--only", "init", kNvidia}, {{"NCCOM_NET_PLUGIN_LAYOUT", "nvidia"}});
  EXPECT_EQ(nvidia.exit_code, 0) << output(nvidia);
  EXPECT_NE(nvidia.out.find("as an NVIDIA ncclNet_v6 table (136 bytes, as expected)"), std::string::npos) << output(nvidia);
  EXPECT_NE(nvidia.out.find("nvidia layout"), std::string::npos) << output(nvidia);

  // Upper case, as the host's knob takes it; --layout still overrides.
  const auto upper = nccom_test::run_child(kTool, {"--only", "init", kNvidia}, {{"NCCOM_NET_PLUGIN_LAYOUT", "NVIDIA"}});
  EXPECT_EQ(upper.exit_code, 0) << output(upper);
  const auto overridden =
      nccom_test::run_child(kTool, {"--layout", "neuron", "--only", "init", kNvidia}, {{"NCCOM_NET_PLUGIN_LAYOUT", "nvidia"}});
  EXPECT_EQ(overridden.exit_code, 1) << output(overridden);  // an NVIDIA table read as Neuron is refused

  const auto bogus = nccom_test::run_child(kTool, {"--only", "init", kNvidia}, {{"NCCOM_NET_PLUGIN_LAYOUT", "amd"}});
  EXPECT_EQ(bogus.exit_code, 2) << output(bogus);
  EXPECT_NE(output(bogus).find("NCCOM_NET_PLUGIN_LAYOUT is \"amd\"; it is neuron or nvidia"), std::string::npos)
      << output(bogus);
}

TEST(ThirdPartyNetPluginCheck, TheV4BuildConforms) {
  const auto r = nccom_test::run_child(kTool, {"--timeout", "20", std::string(TPN_PLUGIN_DIR) + "/libtpn-neuron_v4.so"}, {});
  EXPECT_EQ(r.exit_code, 0) << output(r);
  EXPECT_NE(r.out.find("0 failed"), std::string::npos) << output(r);
  EXPECT_NE(r.out.find("blocking connect/accept (ncclNet_v4)"), std::string::npos) << output(r);
}

}  // namespace
