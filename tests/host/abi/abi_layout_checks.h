/* The boundary layouts checked from C (abi_header_c.c) and from C++
 * (abi_header_test.cc): one list, so both languages check the same things.
 * X(expression, expected value). */
#ifndef NCCOM_TEST_ABI_LAYOUT_CHECKS_H
#define NCCOM_TEST_ABI_LAYOUT_CHECKS_H

#include <nccom/nrt_abi.h>

#define NCCOM_ABI_LAYOUT_CHECKS(X)                             \
  X(sizeof(NRT_STATUS), 4)                                     \
  X(sizeof(nec_version_info_t), 56)                            \
  X(offsetof(nec_version_info_t, git_hash), 32)                \
  X(offsetof(nec_version_info_t, compatibility_version), 48)   \
  X(sizeof(nrt_version_t), 224)                                \
  X(offsetof(nrt_version_t, rt_detail), 32)                    \
  X(offsetof(nrt_version_t, git_hash), 160)                    \
  X(sizeof(nrt_instance_info_t), 32)                           \
  X(offsetof(nrt_instance_info_t, arch_name), 8)               \
  X(offsetof(nrt_instance_info_t, device_revision), 24)        \
  X(sizeof(enc_proxy_histogram_config_t), 168)                 \
  X(sizeof(enc_neuron_device_info_t), 216)                     \
  X(offsetof(enc_neuron_device_info_t, virtual_server_id), 40) \
  X(offsetof(enc_neuron_device_info_t, histogram_config), 48)  \
  X(sizeof(enc_ring_t), 24)                                    \
  X(sizeof(enc_peer_info_t), 16)                               \
  X(sizeof(nccl_comm_info_t), 1376)                            \
  X(offsetof(nccl_comm_info_t, peers), 64)                     \
  X(offsetof(nccl_comm_info_t, rings), 80)                     \
  X(offsetof(nccl_comm_info_t, kangaring_paths), 856)          \
  X(offsetof(nccl_comm_info_t, mla_cycles), 1120)              \
  X(sizeof(net_ops_info_t), 96)                                \
  X(offsetof(net_ops_info_t, data_type_sz), 64)                \
  X(offsetof(net_ops_info_t, enc_channel), 88)                 \
  X(sizeof(net_src_addr_t), 72)                                \
  X(offsetof(net_src_addr_t, dst_mhandle), 64)                 \
  X(sizeof(net_dest_addr_t), 48)                               \
  X(offsetof(net_dest_addr_t, src_rank), 40)                   \
  X(sizeof(enc_host_mem_t), 32)                                \
  X(sizeof(ncclUniqueId), 128)                                 \
  X(sizeof(nccom_export_table_t), 37 * 8)                      \
  X(sizeof(nec_pod_type_t), 4)                                 \
  X(sizeof(enc_pattern_t), 4)                                  \
  X(sizeof(ofi_comm_type_t), 4)                                \
  X(sizeof(nccl_ptr_type), 4)                                  \
  X(sizeof(net_addr_mark_t), 4)                                \
  X(NCCOM_COMPATIBILITY_ID, 89)                                \
  X(NCCOM_VERSION_INFO_SIZE, 56)

#define NCCOM_ABI_COUNT_ONE(name) +1

#ifdef __cplusplus
extern "C" {
#endif

/* Implemented in C (abi_header_c.c): fills values[i] with the i-th checked
 * expression as C computes it (up to cap), returns the number of checks. */
size_t nccom_abi_layout_from_c(size_t* values, size_t cap);
/* The export and import counts of the X-macros, counted by C. */
int nccom_abi_export_count_from_c(void);
int nccom_abi_import_count_from_c(void);
/* 1 if the table's slot types are the export prototypes (C11 _Generic). */
int nccom_abi_table_types_from_c(void);

#ifdef __cplusplus
}
#endif

#endif
