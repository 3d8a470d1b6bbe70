// The device, topology and pod callbacks libnccom imports @NRT_2.0.0,
// answered from the emulated host of device_model.h.
#include "device_model.h"
#include "export.h"
#include "platform.h"

#include <nccom/nrt_abi.h>

namespace devices = nrt_emu::devices;

// Fills available_mla_array with the MLA index of every device, up to
// array_size entries, and returns the device count (which may exceed
// array_size: the caller sees it was cut). -1 on bad input.
NRT_EMU_API int nec_get_device_count(int* available_mla_array, uint32_t array_size) {
  const int n = devices::count();
  if (n < 0 || (available_mla_array == nullptr && array_size > 0)) return -1;
  for (int i = 0; i < n && static_cast<uint32_t>(i) < array_size; ++i) available_mla_array[i] = i;
  return n;
}

NRT_EMU_API int nec_get_device_pci_bdf(int neuron_dev, uint32_t* domain, uint32_t* bus_num,
                                       uint8_t* pci_slot, uint8_t* dev_func) {
  devices::Bdf bdf{};
  if (domain == nullptr || bus_num == nullptr || pci_slot == nullptr || dev_func == nullptr ||
      !devices::pci_bdf(neuron_dev, &bdf)) {
    return -1;
  }
  *domain = bdf.domain;
  *bus_num = bdf.bus;
  *pci_slot = bdf.slot;
  *dev_func = bdf.function;
  return 0;
}

// NEURON_RT_VIRTUAL_CORE_SIZE; a platform with one LNC (trn3-switch-v1: 2)
// defaults to it and refuses any other value (logged: what to set).
NRT_EMU_API NRT_STATUS nec_get_virtual_core_size(uint32_t* virtual_core_size) {
  if (virtual_core_size == nullptr) return NRT_INVALID;
  const auto size = nrt_emu::platform::virtual_core_size();
  if (!size) return NRT_INVALID;
  *virtual_core_size = *size;
  return NRT_SUCCESS;
}

NRT_EMU_API NRT_STATUS nec_build_port_and_rid_map(int local_nec_dev_id, int* mla_indexes,
                                                  int* host_device_ids, int count) {
  return devices::record_port_and_rid_map(local_nec_dev_id, mla_indexes, host_device_ids, count);
}

NRT_EMU_API bool nec_is_mla_available(int local_nec_dev_id, int mla_idx) {
  return devices::valid_mla(local_nec_dev_id, mla_idx);
}

NRT_EMU_API int nec_mla_idx_to_rid(int local_nec_dev_id, int mla_idx) {
  return devices::rid_of_mla(local_nec_dev_id, mla_idx);
}

NRT_EMU_API int nec_rid_to_mla_idx(int local_nec_dev_id, int rid) {
  return devices::mla_of_rid(local_nec_dev_id, rid);
}

NRT_EMU_API int nec_get_peer_mla_idx(int local_nec_dev_id, int mla_idx, int port) {
  return devices::peer_mla(local_nec_dev_id, mla_idx, port);
}

// Pods: none on most platforms (every node has no pod peer, nothing is
// reachable through a pod); trn3-switch-v1 is a NeuronSwitch pod of one node
// (device_model.h).
NRT_EMU_API int nec_get_p2p_pod_peer_node(uint32_t nec_dev_id, int node, uint32_t port_distance,
                                          int* peer_node) {
  if (peer_node == nullptr || nec_dev_id >= static_cast<uint32_t>(devices::kMaxDevices) ||
      !devices::pod_peer_node(static_cast<int>(nec_dev_id), node, port_distance, peer_node)) {
    return -1;
  }
  return 0;
}

NRT_EMU_API NRT_STATUS nec_pod_node_can_access_peer_node(uint32_t pod_type, uint32_t local_rid,
                                                         uint32_t local_node_id,
                                                         uint32_t remote_rid,
                                                         uint32_t remote_node_id,
                                                         int* can_access_peer) {
  // libnccom's pod type, a plain number until checked.
  if (can_access_peer == nullptr || pod_type >= NEC_POD_TYPE_INVALID) return NRT_INVALID;
  const auto type = static_cast<nec_pod_type_t>(pod_type);
  *can_access_peer =
      devices::pod_can_access(type, local_rid, local_node_id, remote_rid, remote_node_id) ? 1 : 0;
  return NRT_SUCCESS;
}
