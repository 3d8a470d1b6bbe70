// The proxy-side callbacks libnccom imports @NRT_2.0.0 (abi.md §5.2): the
// semaphore increment and the dynamic send/recv size table.
#include "export.h"
#include "runtime_log.h"

#include <nccom/nrt_abi.h>

// On a device the address is a memory-mapped semaphore-increment register and
// libnrt stores `val` to it (the hardware adds). In the emu the address IS the
// semaphore, so the add is done here, atomically: proxy threads of several
// ranks may signal one semaphore at once.
NRT_EMU_API void nec_inc_semaphore(volatile uint32_t* sem_inc_addr, uint32_t val) {
  if (sem_inc_addr == nullptr) {
    nrt_emu::log::message(nrt_emu::log::Level::Warn, "nec_inc_semaphore: NULL semaphore address");
    return;
  }
  __atomic_fetch_add(sem_inc_addr, val, __ATOMIC_SEQ_CST);
}

// KNOWN GAP: the layout of the dynamic-size table behind enc_host_mem_t is
// defined by the proxy work (spec proxy.md). Until then these four callbacks
// say so in the runtime log on every call, answer 0 and do nothing else.
namespace {

size_t dynamic_sizes_gap(const char* name) {
  nrt_emu::log::message(nrt_emu::log::Level::Warn,
                        "%s: dynamic send/recv sizes are not implemented in the reference "
                        "runtime yet",
                        name);
  return 0;
}

}  // namespace

NRT_EMU_API size_t nec_get_dynamic_send_size_bytes(enc_host_mem_t* dyn_input, size_t data_type_sz,
                                                   int dst_rank, int rank_n) {
  return dynamic_sizes_gap("nec_get_dynamic_send_size_bytes");
}

NRT_EMU_API size_t nec_get_dynamic_send_offset_bytes(enc_host_mem_t* dyn_input,
                                                     size_t data_type_sz, int dst_rank,
                                                     int rank_n) {
  return dynamic_sizes_gap("nec_get_dynamic_send_offset_bytes");
}

NRT_EMU_API size_t nec_get_dynamic_recv_offset_bytes(enc_host_mem_t* dyn_input,
                                                     size_t data_type_sz, int src_rank,
                                                     int rank_n) {
  return dynamic_sizes_gap("nec_get_dynamic_recv_offset_bytes");
}

NRT_EMU_API void nec_set_recv_size_bytes(enc_host_mem_t* dyn_input, size_t recv_size_bytes,
                                         size_t data_type_sz, int src_rank, int rank_n) {
  dynamic_sizes_gap("nec_set_recv_size_bytes");
}
