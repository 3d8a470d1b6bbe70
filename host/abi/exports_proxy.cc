// Proxy and NET_NEURON transport exports (abi.md §3 slots 7–10, 14–17, 20).
// Implemented by the proxy issue (#6).
#include "abi/export.h"

using nccom::abi::not_implemented;

NCCOM_API NRT_STATUS neuronExpandConnectivity(void* comm, enc_net_connectivity_t conn) {
  return not_implemented("neuronExpandConnectivity", 6);
}

NCCOM_API NRT_STATUS neuronStartNetworkProxy(void* comm, uint32_t stream, uint32_t basic_block_id,
                                             net_ops_info_t* ops, int ops_n, net_src_addr_t* src,
                                             int src_n, net_dest_addr_t* dst, int dst_n) {
  return not_implemented("neuronStartNetworkProxy", 6);
}

NCCOM_API NRT_STATUS neuronStopNetworkProxy(void* comm, uint32_t stream) {
  return not_implemented("neuronStopNetworkProxy", 6);
}

// Any failure of the progress path is NRT_NETWORK_PROXY_FAILURE (abi.md §4).
NCCOM_API NRT_STATUS neuronNetworkProxyProgress(void* comm, uint32_t stream,
                                                uint32_t basic_block_id, bool* idle, bool* done) {
  return not_implemented("neuronNetworkProxyProgress", 6, NRT_NETWORK_PROXY_FAILURE);
}

NCCOM_API NRT_STATUS neuronPreferredNcRidNic(uint32_t a, uint32_t b, int* nic_out) {
  return not_implemented("neuronPreferredNcRidNic", 6);
}

NCCOM_API NRT_STATUS neuronPreferredNcRidNicBdf(uint32_t a, uint32_t b, char* bdf_out,
                                                size_t bdf_len) {
  return not_implemented("neuronPreferredNcRidNicBdf", 6);
}

NCCOM_API NRT_STATUS neuronNetRegMr(void* comm, enc_pattern_t pattern, int channel, bool is_send,
                                    ofi_comm_type_t comm_type, void* addr, size_t size,
                                    nccl_ptr_type type, void** mhandle_out) {
  return not_implemented("neuronNetRegMr", 6);
}

NCCOM_API NRT_STATUS neuronNetDeregMr(void* comm, enc_pattern_t pattern, int channel,
                                      bool is_send, ofi_comm_type_t comm_type, void* mhandle) {
  return not_implemented("neuronNetDeregMr", 6);
}

NCCOM_API NRT_STATUS neuronGetNetConnector(void* comm, enc_pattern_t pattern, int channel,
                                           bool is_send, void** connector_out) {
  return not_implemented("neuronGetNetConnector", 6);
}
