// The emulated host's devices: enumeration, PCI location, MLA/rid mapping,
// the ring of MLA ports, the recorded port/rid maps and the (absent) pods.
#include "scoped_env.h"

#include <nrt_emu.h>

#include <gtest/gtest.h>

#include <climits>
#include <vector>

using nccom_test::ScopedEnv;

namespace {

TEST(EmuDeviceModel, DefaultHostHasTwoDevices) {
  ScopedEnv unset("NEURON_RT_EMU_DEVICES", nullptr);
  int mlas[4] = {-7, -7, -7, -7};
  EXPECT_EQ(nec_get_device_count(mlas, 4), 2);
  EXPECT_EQ(mlas[0], 0);
  EXPECT_EQ(mlas[1], 1);
  EXPECT_EQ(mlas[2], -7) << "nothing written past the device count";
  EXPECT_EQ(nec_get_device_count(nullptr, 0), 2);
}

TEST(EmuDeviceModel, CountIsConfigurableAndCutsToTheCallersArray) {
  ScopedEnv devices("NEURON_RT_EMU_DEVICES", "16");
  int mlas[3] = {-7, -7, -7};
  EXPECT_EQ(nec_get_device_count(mlas, 2), 16) << "the count, even when the array is shorter";
  EXPECT_EQ(mlas[1], 1);
  EXPECT_EQ(mlas[2], -7);
  EXPECT_EQ(nec_get_device_count(nullptr, 2), -1);
}

TEST(EmuDeviceModel, InvalidDeviceCountsFailEverywhere) {
  for (const char* bad : {"0", "17", "-2", "many"}) {
    ScopedEnv devices("NEURON_RT_EMU_DEVICES", bad);
    EXPECT_EQ(nec_get_device_count(nullptr, 0), -1) << bad;
    EXPECT_FALSE(nec_is_mla_available(0, 0)) << bad;
    EXPECT_EQ(nec_get_peer_mla_idx(0, 0, 0), -1) << bad;
  }
}

TEST(EmuDeviceModel, PciBdfIsStablePerDevice) {
  ScopedEnv devices("NEURON_RT_EMU_DEVICES", "4");
  for (int dev = 0; dev < 4; ++dev) {
    uint32_t domain = 99, bus = 99;
    uint8_t slot = 99, function = 99;
    ASSERT_EQ(nec_get_device_pci_bdf(dev, &domain, &bus, &slot, &function), 0);
    EXPECT_EQ(domain, 0u);
    EXPECT_EQ(bus, 0x10u + dev);
    EXPECT_EQ(slot, 0);
    EXPECT_EQ(function, 0);
  }
  uint32_t domain = 0, bus = 0;
  uint8_t slot = 0, function = 0;
  EXPECT_EQ(nec_get_device_pci_bdf(4, &domain, &bus, &slot, &function), -1);
  EXPECT_EQ(nec_get_device_pci_bdf(-1, &domain, &bus, &slot, &function), -1);
  EXPECT_EQ(nec_get_device_pci_bdf(0, nullptr, &bus, &slot, &function), -1);
  EXPECT_EQ(nec_get_device_pci_bdf(0, &domain, &bus, nullptr, &function), -1);
}

TEST(EmuDeviceModel, MlaIndexAndRoutingIdAreTheDeviceIndex) {
  ScopedEnv devices("NEURON_RT_EMU_DEVICES", "4");
  for (int mla = 0; mla < 4; ++mla) {
    EXPECT_TRUE(nec_is_mla_available(0, mla));
    EXPECT_EQ(nec_mla_idx_to_rid(1, mla), mla);
    EXPECT_EQ(nec_rid_to_mla_idx(1, mla), mla);
  }
  EXPECT_FALSE(nec_is_mla_available(0, 4));
  EXPECT_FALSE(nec_is_mla_available(4, 0));
  EXPECT_FALSE(nec_is_mla_available(-1, 0));
  EXPECT_EQ(nec_mla_idx_to_rid(0, 4), -1);
  EXPECT_EQ(nec_mla_idx_to_rid(0, INT_MIN), -1);
  EXPECT_EQ(nec_rid_to_mla_idx(0, -1), -1);
  EXPECT_EQ(nec_rid_to_mla_idx(9, 0), -1);
}

TEST(EmuDeviceModel, PortsFormARing) {
  ScopedEnv devices("NEURON_RT_EMU_DEVICES", "4");
  for (int mla = 0; mla < 4; ++mla) {
    EXPECT_EQ(nec_get_peer_mla_idx(0, mla, 0), (mla + 1) % 4) << "port 0 leads to the next MLA";
    EXPECT_EQ(nec_get_peer_mla_idx(0, mla, 1), (mla + 3) % 4) << "port 1 to the previous one";
    EXPECT_EQ(nec_get_peer_mla_idx(0, mla, 2), -1);
    EXPECT_EQ(nec_get_peer_mla_idx(0, mla, -1), -1);
  }
  EXPECT_EQ(nec_get_peer_mla_idx(0, 4, 0), -1);
  EXPECT_EQ(nec_get_peer_mla_idx(7, 0, 0), -1);
}

TEST(EmuDeviceModel, ASingleDeviceHasNoPeers) {
  ScopedEnv devices("NEURON_RT_EMU_DEVICES", "1");
  EXPECT_EQ(nec_get_peer_mla_idx(0, 0, 0), -1);
  EXPECT_EQ(nec_get_peer_mla_idx(0, 0, 1), -1);
}

TEST(EmuDeviceModel, PortAndRidMapIsRecordedAndValidated) {
  ScopedEnv devices("NEURON_RT_EMU_DEVICES", "2");
  int mla[3] = {1, 0, 1};
  int host_ids[3] = {10, 11, 12};
  EXPECT_EQ(nrt_emu_debug_port_and_rid_map(1, nullptr, nullptr, 0), -1) << "nothing recorded yet";
  ASSERT_EQ(nec_build_port_and_rid_map(1, mla, host_ids, 3), NRT_SUCCESS);
  mla[0] = 99;  // the runtime keeps its own copy
  int got_mla[4] = {}, got_ids[4] = {};
  ASSERT_EQ(nrt_emu_debug_port_and_rid_map(1, got_mla, got_ids, 4), 3);
  EXPECT_EQ(std::vector<int>(got_mla, got_mla + 3), (std::vector<int>{1, 0, 1}));
  EXPECT_EQ(std::vector<int>(got_ids, got_ids + 3), (std::vector<int>{10, 11, 12}));

  EXPECT_EQ(nec_build_port_and_rid_map(2, mla, host_ids, 3), NRT_INVALID) << "no device 2";
  EXPECT_EQ(nec_build_port_and_rid_map(-1, mla, host_ids, 3), NRT_INVALID);
  EXPECT_EQ(nec_build_port_and_rid_map(0, nullptr, host_ids, 3), NRT_INVALID);
  EXPECT_EQ(nec_build_port_and_rid_map(0, mla, nullptr, 3), NRT_INVALID);
  EXPECT_EQ(nec_build_port_and_rid_map(0, mla, host_ids, 0), NRT_INVALID);
  EXPECT_EQ(nec_build_port_and_rid_map(0, mla, host_ids, -5), NRT_INVALID);
  EXPECT_EQ(nec_build_port_and_rid_map(0, mla, host_ids, INT_MAX), NRT_INVALID);
  EXPECT_EQ(nrt_emu_debug_port_and_rid_map(0, nullptr, nullptr, 0), -1) << "rejected maps not kept";
}

TEST(EmuDeviceModel, ThereAreNoPods) {
  ScopedEnv devices("NEURON_RT_EMU_DEVICES", "2");
  int peer = 5;
  EXPECT_EQ(nec_get_p2p_pod_peer_node(0, 0, 1, &peer), 0);
  EXPECT_EQ(peer, -1);
  EXPECT_EQ(nec_get_p2p_pod_peer_node(2, 0, 1, &peer), -1);
  EXPECT_EQ(nec_get_p2p_pod_peer_node(0xffffffffu, 0, 1, &peer), -1);
  EXPECT_EQ(nec_get_p2p_pod_peer_node(0, 0, 1, nullptr), -1);

  int can_access = 5;
  for (nec_pod_type_t type : {NEC_POD_TYPE_NONE, NEC_POD_TYPE_P2P, NEC_POD_TYPE_SWITCH}) {
    can_access = 5;
    EXPECT_EQ(nec_pod_node_can_access_peer_node(type, 0, 0, 1, 1, &can_access), NRT_SUCCESS);
    EXPECT_EQ(can_access, 0);
  }
  EXPECT_EQ(nec_pod_node_can_access_peer_node(NEC_POD_TYPE_INVALID, 0, 0, 1, 1, &can_access),
            NRT_INVALID);
  EXPECT_EQ(nec_pod_node_can_access_peer_node(static_cast<uint32_t>(-1), 0, 0, 1, 1, &can_access),
            NRT_INVALID);
  EXPECT_EQ(nec_pod_node_can_access_peer_node(NEC_POD_TYPE_P2P, 0, 0, 1, 1, nullptr), NRT_INVALID);
}

}  // namespace
