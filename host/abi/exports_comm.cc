// Communicator and bootstrap exports (abi.md §3 slots 1–7, 11–13, 18, 19).
// Implemented by the bootstrap issue (#3) and the topology issue (#4).
#include "abi/export.h"

using nccom::abi::not_implemented;

NCCOM_API NRT_STATUS neuronGetUniqueId(char* id_out, int rank_n, const char* hint) {
  return not_implemented("neuronGetUniqueId", 3);
}

NCCOM_API NRT_STATUS neuronInitGlobalComm(int g_dev_id, int g_dev_count,
                                          const enc_neuron_device_info_t* dev,
                                          const char* root_comm_id, void** comm_out,
                                          const char* hint) {
  return not_implemented("neuronInitGlobalComm", 3);
}

NCCOM_API NRT_STATUS neuronInitComm(void** comm_out, int rank_n, char* id, int rank,
                                    const enc_neuron_device_info_t* dev, bool bypass_graph) {
  return not_implemented("neuronInitComm", 3);
}

NCCOM_API NRT_STATUS neuronBuildGraphComm(void* comm) {
  return not_implemented("neuronBuildGraphComm", 4);
}

NCCOM_API NRT_STATUS neuronGetCommInfo(void* comm, nccl_comm_info_t* out) {
  return not_implemented("neuronGetCommInfo", 3);
}

NCCOM_API NRT_STATUS neuronFreeComm(void* comm) {
  return not_implemented("neuronFreeComm", 3);
}

NCCOM_API NRT_STATUS neuronBootstrapSend(void* state, int peer, void* data, size_t size,
                                         const char* hint) {
  return not_implemented("neuronBootstrapSend", 3);
}

NCCOM_API NRT_STATUS neuronBootstrapRecv(void* state, int peer, void* data, size_t size,
                                         const char* hint) {
  return not_implemented("neuronBootstrapRecv", 3);
}

NCCOM_API NRT_STATUS neuronBootstrapAllGather(void* state, void* all_data, size_t size_per_rank,
                                              const char* hint) {
  return not_implemented("neuronBootstrapAllGather", 3);
}

NCCOM_API NRT_STATUS neuronGetPeerDeviceId(void* comm, int peer, int* dev_out) {
  return not_implemented("neuronGetPeerDeviceId", 3);
}

NCCOM_API NRT_STATUS neuronSetAffinity(void* comm, nccom_cpu_set_t* override_mask,
                                       nccom_cpu_set_t* save, int core) {
  return not_implemented("neuronSetAffinity", 3);
}
