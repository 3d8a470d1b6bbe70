// The SDK headers as a plugin author sees them: C and C++ agree on every
// layout, and the descriptor's head never moves.
#include <nccom/net_handle.h>
#include <nccom/plugin.h>
#include <nccom/topo_plugin.h>
#include <nccom/transport_plugin.h>

#include <gtest/gtest.h>

#include <cstddef>

extern "C" {
extern const nccom_plugin_descriptor_t sdk_c_example_descriptor;
size_t sdk_c_descriptor_size(void);
size_t sdk_c_descriptor_ops_offset(void);
size_t sdk_c_host_api_size(void);
size_t sdk_c_ops_size(void);
size_t sdk_c_topo_ops_size(void);
size_t sdk_c_topo_ops_free_text_offset(void);
size_t sdk_c_topo_node_size(void);
size_t sdk_c_transport_ops_size(void);
size_t sdk_c_transport_ops_op_free_offset(void);
size_t sdk_c_transport_comm_size(void);
size_t sdk_c_adapted_net_size(void);
size_t sdk_c_adapted_net_file_offset(void);
size_t sdk_c_descriptor_knobs_offset(void);
size_t sdk_c_knob_size(void);
size_t sdk_c_knob_table_size(void);
}

TEST(SdkPluginHeader, DescriptorHeadIsFrozen) {
  EXPECT_EQ(offsetof(nccom_plugin_descriptor_t, abi_version), 0u);
  EXPECT_EQ(offsetof(nccom_plugin_descriptor_t, struct_size), 4u);
  EXPECT_EQ(offsetof(nccom_plugin_descriptor_t, kind), 8u);
  EXPECT_EQ(offsetof(nccom_plugin_descriptor_t, name), 16u);
  EXPECT_EQ(offsetof(nccom_plugin_descriptor_t, plugin_version), 24u);
  EXPECT_EQ(offsetof(nccom_plugin_descriptor_t, capabilities), 32u);
  EXPECT_EQ(offsetof(nccom_plugin_descriptor_t, ops), 40u);
  // ABI 1 as first published ended here; `knobs` is appended after it.
  EXPECT_EQ(offsetof(nccom_plugin_descriptor_t, knobs), 48u);
  EXPECT_EQ(sizeof(nccom_plugin_descriptor_t), 56u);
  EXPECT_EQ(offsetof(nccom_knob_table_t, knobs), 16u);
  EXPECT_EQ(sizeof(nccom_knob_t), 64u);
  EXPECT_EQ(offsetof(nccom_plugin_ops_t, struct_size), 0u);
  EXPECT_EQ(offsetof(nccom_plugin_ops_t, init), 8u);
  EXPECT_EQ(offsetof(nccom_plugin_ops_t, fini), 16u);
  EXPECT_EQ(offsetof(nccom_host_api_t, struct_size), 0u);
  EXPECT_EQ(offsetof(nccom_host_api_t, log), 8u);
}

TEST(SdkPluginHeader, CAndCxxAgree) {
  EXPECT_EQ(sdk_c_descriptor_size(), sizeof(nccom_plugin_descriptor_t));
  EXPECT_EQ(sdk_c_descriptor_ops_offset(), offsetof(nccom_plugin_descriptor_t, ops));
  EXPECT_EQ(sdk_c_descriptor_knobs_offset(), offsetof(nccom_plugin_descriptor_t, knobs));
  EXPECT_EQ(sdk_c_knob_size(), sizeof(nccom_knob_t));
  EXPECT_EQ(sdk_c_knob_table_size(), sizeof(nccom_knob_table_t));
  EXPECT_EQ(sdk_c_host_api_size(), sizeof(nccom_host_api_t));
  EXPECT_EQ(sdk_c_ops_size(), sizeof(nccom_plugin_ops_t));
  EXPECT_EQ(sdk_c_topo_ops_size(), sizeof(nccom_topo_ops_t));
  EXPECT_EQ(sdk_c_topo_ops_free_text_offset(), offsetof(nccom_topo_ops_t, free_text));
  EXPECT_EQ(sdk_c_topo_node_size(), sizeof(nccom_topo_node_t));
  EXPECT_EQ(sdk_c_transport_ops_size(), sizeof(nccom_transport_ops_t));
  EXPECT_EQ(sdk_c_transport_ops_op_free_offset(), offsetof(nccom_transport_ops_t, op_free));
  EXPECT_EQ(sdk_c_transport_comm_size(), sizeof(nccom_transport_comm_t));
  EXPECT_EQ(sdk_c_adapted_net_size(), sizeof(nccom_adapted_net_t));
  EXPECT_EQ(sdk_c_adapted_net_file_offset(), offsetof(nccom_adapted_net_t, file));
}

// neuronGetOFIHandle's adapted table: a runtime calls its first member as a
// Neuron v6 table and reads the rest after the magic.
TEST(SdkNetHandleHeader, TheAdaptedTableStartsWithAV6Table) {
  EXPECT_EQ(offsetof(nccom_adapted_net_t, net), 0u);
  EXPECT_EQ(offsetof(nccom_adapted_net_t, magic), sizeof(ncclNet_v6_t));
  EXPECT_EQ(sizeof(NCCOM_ADAPTED_NET_MAGIC) - 1, sizeof(nccom_adapted_net_t{}.magic));
}

TEST(SdkTransportHeader, VtableStartsWithTheCommonHead) {
  EXPECT_EQ(offsetof(nccom_transport_ops_t, head), 0u);
  EXPECT_EQ(offsetof(nccom_transport_ops_t, ops_version), sizeof(nccom_plugin_ops_t));
  EXPECT_EQ(NCCOM_TRANSPORT_CONNECT_BYTES, 128);
}

// The topology vtable starts with the common head, so the loader's generic
// checks (struct_size, init, fini) apply to it unchanged.
TEST(SdkTopoHeader, VtableStartsWithTheCommonHead) {
  EXPECT_EQ(offsetof(nccom_topo_ops_t, head), 0u);
  EXPECT_EQ(offsetof(nccom_topo_ops_t, ops_version), sizeof(nccom_plugin_ops_t));
  EXPECT_EQ(sizeof(nccom_topo_machine_t) % 8, 0u);
}

TEST(SdkPluginHeader, CDescriptorIsUsable) {
  const nccom_plugin_descriptor_t& d = sdk_c_example_descriptor;
  EXPECT_EQ(d.abi_version, NCCOM_PLUGIN_ABI_VERSION);
  EXPECT_EQ(d.kind, static_cast<uint32_t>(NCCOM_PLUGIN_KIND_TRANSPORT));
  EXPECT_STREQ(d.name, "c-example");
  ASSERT_NE(d.ops, nullptr);
  void* ctx = &ctx;
  EXPECT_EQ(d.ops->init(nullptr, &ctx), NCCOM_PLUGIN_OK);
  EXPECT_EQ(ctx, nullptr);
  EXPECT_EQ(d.ops->fini, nullptr);
}
