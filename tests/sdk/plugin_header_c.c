/* nccom/plugin.h must compile as strict C99 (built with -std=c99 -pedantic-errors). */
#include <nccom/net_handle.h>
#include <nccom/plugin.h>
#include <nccom/topo_plugin.h>
#include <nccom/transport_plugin.h>

#include <stddef.h>

static nccom_plugin_status_t example_init(const nccom_host_api_t* host, void** ctx) {
  (void)host;
  *ctx = NULL;
  return NCCOM_PLUGIN_OK;
}

static const nccom_plugin_ops_t example_ops = {sizeof(nccom_plugin_ops_t), 0, example_init, NULL};

const nccom_plugin_descriptor_t sdk_c_example_descriptor = {NCCOM_PLUGIN_ABI_VERSION,
                                                            sizeof(nccom_plugin_descriptor_t),
                                                            NCCOM_PLUGIN_KIND_TRANSPORT,
                                                            0,
                                                            "c-example",
                                                            "0.1.0",
                                                            0,
                                                            &example_ops,
                                                            NULL};

/* Layout as seen by a C compiler, compared with C++'s view by the test. */
size_t sdk_c_descriptor_size(void) { return sizeof(nccom_plugin_descriptor_t); }
size_t sdk_c_descriptor_ops_offset(void) { return offsetof(nccom_plugin_descriptor_t, ops); }
size_t sdk_c_descriptor_knobs_offset(void) { return offsetof(nccom_plugin_descriptor_t, knobs); }
size_t sdk_c_knob_size(void) { return sizeof(nccom_knob_t); }
size_t sdk_c_knob_table_size(void) { return sizeof(nccom_knob_table_t); }
size_t sdk_c_host_api_size(void) { return sizeof(nccom_host_api_t); }
size_t sdk_c_ops_size(void) { return sizeof(nccom_plugin_ops_t); }
size_t sdk_c_topo_ops_size(void) { return sizeof(nccom_topo_ops_t); }
size_t sdk_c_topo_ops_free_text_offset(void) { return offsetof(nccom_topo_ops_t, free_text); }
size_t sdk_c_topo_node_size(void) { return sizeof(nccom_topo_node_t); }
size_t sdk_c_transport_ops_size(void) { return sizeof(nccom_transport_ops_t); }
size_t sdk_c_transport_ops_op_free_offset(void) { return offsetof(nccom_transport_ops_t, op_free); }
size_t sdk_c_transport_comm_size(void) { return sizeof(nccom_transport_comm_t); }
size_t sdk_c_adapted_net_size(void) { return sizeof(nccom_adapted_net_t); }
size_t sdk_c_adapted_net_file_offset(void) { return offsetof(nccom_adapted_net_t, file); }
