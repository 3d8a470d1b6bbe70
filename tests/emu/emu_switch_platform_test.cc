// The emulated Trn3 Switch-V1 node (NEURON_RT_EMU_PLATFORM=trn3-switch-v1):
// instance info as Trn3, 16 devices and LNC 2 by default and only those,
// a NeuronSwitch pod of one node; wrong combinations fail saying what to
// set; the other platforms keep their answers.
#include "runtime_log_text.h"
#include "scoped_env.h"

#include <nrt_emu.h>

#include <gtest/gtest.h>

#include <string>

using nccom_test::ScopedEnv;

namespace {

TEST(EmuSwitchPlatform, InstanceInfoIsTrn3) {
  ScopedEnv platform("NEURON_RT_EMU_PLATFORM", "trn3-switch-v1");
  nrt_instance_info_t info{};
  ASSERT_EQ(nrt_get_instance_info(&info, sizeof info), NRT_SUCCESS);
  EXPECT_EQ(info.family, 10u);  // TRN3: the pod type, not the family, tells Switch-V1 apart
  EXPECT_STREQ(info.arch_name, "trn3");
  EXPECT_STREQ(info.device_revision, "v4");
}

TEST(EmuSwitchPlatform, SixteenDevicesAndLnc2ByDefault) {
  ScopedEnv platform("NEURON_RT_EMU_PLATFORM", "trn3-switch-v1");
  ScopedEnv devices("NEURON_RT_EMU_DEVICES", nullptr);
  ScopedEnv lnc("NEURON_RT_VIRTUAL_CORE_SIZE", nullptr);
  EXPECT_EQ(nec_get_device_count(nullptr, 0), 16);
  uint32_t size = 0;
  ASSERT_EQ(nec_get_virtual_core_size(&size), NRT_SUCCESS);
  EXPECT_EQ(size, 2u);
  ScopedEnv explicit_devices("NEURON_RT_EMU_DEVICES", "16");
  ScopedEnv explicit_lnc("NEURON_RT_VIRTUAL_CORE_SIZE", "2");
  EXPECT_EQ(nec_get_device_count(nullptr, 0), 16);
  size = 0;
  ASSERT_EQ(nec_get_virtual_core_size(&size), NRT_SUCCESS);
  EXPECT_EQ(size, 2u);
}

TEST(EmuSwitchPlatform, Lnc1FailsSayingWhatToSet) {
  ScopedEnv platform("NEURON_RT_EMU_PLATFORM", "trn3-switch-v1");
  ScopedEnv lnc("NEURON_RT_VIRTUAL_CORE_SIZE", "1");
  nrt_emu_log_clear();
  uint32_t size = 7;
  EXPECT_EQ(nec_get_virtual_core_size(&size), NRT_INVALID);
  EXPECT_EQ(size, 7u);
  EXPECT_NE(nccom_test::runtime_log_text().find(
                "NEURON_RT_EMU_PLATFORM=trn3-switch-v1 runs LNC 2 only: set "
                "NEURON_RT_VIRTUAL_CORE_SIZE=2 (or unset it), not 1"),
            std::string::npos)
      << nccom_test::runtime_log_text();
}

TEST(EmuSwitchPlatform, OtherDeviceCountsFailSayingWhatToSet) {
  ScopedEnv platform("NEURON_RT_EMU_PLATFORM", "trn3-switch-v1");
  for (const char* n : {"1", "4", "15"}) {
    ScopedEnv devices("NEURON_RT_EMU_DEVICES", n);
    nrt_emu_log_clear();
    EXPECT_EQ(nec_get_device_count(nullptr, 0), -1) << n;
    EXPECT_NE(nccom_test::runtime_log_text().find(
                  "has 16 devices per node: set NEURON_RT_EMU_DEVICES=16 (or unset it), not " +
                  std::string(n)),
              std::string::npos)
        << nccom_test::runtime_log_text();
    EXPECT_FALSE(nec_is_mla_available(0, 0)) << "no device is valid on an impossible host";
  }
}

TEST(EmuSwitchPlatform, IsASwitchPodOfOneNode) {
  ScopedEnv platform("NEURON_RT_EMU_PLATFORM", "trn3-switch-v1");
  ScopedEnv devices("NEURON_RT_EMU_DEVICES", nullptr);
  // No other node: no pod peer at any distance.
  for (uint32_t distance : {0u, 1u, 2u, 8u}) {
    int peer = 5;
    EXPECT_EQ(nec_get_p2p_pod_peer_node(15, 0, distance, &peer), 0);
    EXPECT_EQ(peer, -1) << distance;
  }
  int peer = 5;
  EXPECT_EQ(nec_get_p2p_pod_peer_node(16, 0, 1, &peer), -1) << "device 16 does not exist";
  // Through the switch every device of node 0 reaches every other one.
  int can = 5;
  ASSERT_EQ(nec_pod_node_can_access_peer_node(NEC_POD_TYPE_SWITCH, 0, 0, 15, 0, &can), NRT_SUCCESS);
  EXPECT_EQ(can, 1);
  ASSERT_EQ(nec_pod_node_can_access_peer_node(NEC_POD_TYPE_SWITCH, 7, 0, 7, 0, &can), NRT_SUCCESS);
  EXPECT_EQ(can, 1);
  // Not another node, not a routing id beyond the devices, not another pod kind.
  struct Case {
    nec_pod_type_t type;
    uint32_t lrid, lnode, rrid, rnode;
  };
  for (const Case& c :
       {Case{NEC_POD_TYPE_SWITCH, 0, 0, 1, 1}, Case{NEC_POD_TYPE_SWITCH, 0, 1, 1, 0},
        Case{NEC_POD_TYPE_SWITCH, 0, 0, 16, 0}, Case{NEC_POD_TYPE_P2P, 0, 0, 1, 0},
        Case{NEC_POD_TYPE_NONE, 0, 0, 1, 0}}) {
    can = 5;
    ASSERT_EQ(nec_pod_node_can_access_peer_node(c.type, c.lrid, c.lnode, c.rrid, c.rnode, &can),
              NRT_SUCCESS);
    EXPECT_EQ(can, 0) << c.type << " " << c.lrid << "/" << c.lnode << " -> " << c.rrid << "/"
                      << c.rnode;
  }
  EXPECT_EQ(nec_pod_node_can_access_peer_node(NEC_POD_TYPE_INVALID, 0, 0, 1, 0, &can), NRT_INVALID);
}

TEST(EmuSwitchPlatform, OtherPlatformsKeepTheirDefaultsAndHaveNoPod) {
  ScopedEnv devices("NEURON_RT_EMU_DEVICES", nullptr);
  ScopedEnv lnc("NEURON_RT_VIRTUAL_CORE_SIZE", nullptr);
  for (const char* name : {"emu", "trn1", "trn2", "trn3"}) {
    ScopedEnv platform("NEURON_RT_EMU_PLATFORM", name);
    EXPECT_EQ(nec_get_device_count(nullptr, 0), 2) << name;
    uint32_t size = 0;
    ASSERT_EQ(nec_get_virtual_core_size(&size), NRT_SUCCESS) << name;
    EXPECT_EQ(size, 1u) << name;
    int can = 5;
    ASSERT_EQ(nec_pod_node_can_access_peer_node(NEC_POD_TYPE_SWITCH, 0, 0, 1, 0, &can),
              NRT_SUCCESS);
    EXPECT_EQ(can, 0) << name;
    ScopedEnv four("NEURON_RT_EMU_DEVICES", "4");
    EXPECT_EQ(nec_get_device_count(nullptr, 0), 4) << name;
  }
}

}  // namespace
