// The proxy-side callbacks libnccom imports @NRT_2.0.0: the
// semaphore increment and the dynamic send/recv size table.
#include "bell.h"
#include "export.h"
#include "runtime_log.h"

#include <nccom/nrt_abi.h>

#include <nrt_emu.h>

#include <cstdint>

// On a device the address is a memory-mapped semaphore-increment register and
// libnrt stores `val` to it (the hardware adds). In the emu the address IS the
// semaphore, so the add is done here, atomically: proxy threads of several
// ranks (or processes sharing the device-memory region) may signal one
// semaphore at once.
NRT_EMU_API void nec_inc_semaphore(volatile uint32_t* sem_inc_addr, uint32_t val) {
  if (sem_inc_addr == nullptr) {
    nrt_emu::log::message(nrt_emu::log::Level::Warn, "nec_inc_semaphore: NULL semaphore address");
    return;
  }
  __atomic_fetch_add(sem_inc_addr, val, __ATOMIC_SEQ_CST);
  nrt_emu::bell::ring_local();  // the device loop waiting on it, if asleep
}

// The dynamic-size table behind enc_host_mem_t.va (layout in nrt_emu.h):
// a 16-byte header {magic, rank_n} and one 32-byte entry per peer rank, all
// counts and offsets in elements. Nothing here trusts its arguments: a bad
// input is one ERROR line naming the callback and the rule, and the answer 0.
namespace {

using nrt_emu::log::Level;

nrt_emu_dyn_entry_t* lookup(const char* fn, enc_host_mem_t* dyn, size_t data_type_sz, int rank,
                            int rank_n) {
  if (dyn == nullptr || dyn->va == nullptr) {
    nrt_emu::log::message(Level::Error, "%s: NULL dynamic-size input%s", fn,
                          dyn == nullptr ? "" : " memory (va)");
    return nullptr;
  }
  if (dyn->size < sizeof(nrt_emu_dyn_table_t)) {
    nrt_emu::log::message(Level::Error,
                          "%s: dynamic-size table too small: %zu bytes, the header needs %zu", fn,
                          dyn->size, sizeof(nrt_emu_dyn_table_t));
    return nullptr;
  }
  auto* table = static_cast<nrt_emu_dyn_table_t*>(dyn->va);
  const uint32_t magic = __atomic_load_n(&table->magic, __ATOMIC_ACQUIRE);
  const uint32_t table_ranks = __atomic_load_n(&table->rank_n, __ATOMIC_ACQUIRE);
  if (magic != NRT_EMU_DYN_TABLE_MAGIC) {
    nrt_emu::log::message(Level::Error,
                          "%s: dynamic-size input is not a table: magic 0x%08x, expected 0x%08x",
                          fn, magic, NRT_EMU_DYN_TABLE_MAGIC);
    return nullptr;
  }
  const size_t needed = NRT_EMU_DYN_TABLE_BYTES(static_cast<size_t>(table_ranks));
  if (dyn->size < needed) {
    nrt_emu::log::message(Level::Error,
                          "%s: dynamic-size table too small: %zu bytes for %u ranks, needs %zu", fn,
                          dyn->size, table_ranks, needed);
    return nullptr;
  }
  if (rank_n < 1 || static_cast<uint32_t>(rank_n) > table_ranks) {
    nrt_emu::log::message(Level::Error, "%s: rank_n %d outside 1..%u (the table's ranks)", fn,
                          rank_n, table_ranks);
    return nullptr;
  }
  if (rank < 0 || rank >= rank_n) {
    nrt_emu::log::message(Level::Error, "%s: peer rank %d outside 0..%d", fn, rank, rank_n - 1);
    return nullptr;
  }
  if (data_type_sz == 0) {
    nrt_emu::log::message(Level::Error, "%s: data_type_sz is 0", fn);
    return nullptr;
  }
  return NRT_EMU_DYN_TABLE_ENTRIES(table) + rank;
}

// elements × data_type_sz, or 0 with an ERROR when it does not fit size_t.
size_t to_bytes(const char* fn, const char* field, uint64_t elements, size_t data_type_sz,
                int rank) {
  if (elements > SIZE_MAX / data_type_sz) {
    nrt_emu::log::message(Level::Error, "%s: %s %llu elements of %zu bytes (peer %d) overflows", fn,
                          field, static_cast<unsigned long long>(elements), data_type_sz, rank);
    return 0;
  }
  return static_cast<size_t>(elements) * data_type_sz;
}

size_t read_bytes(const char* fn, const char* field, uint64_t nrt_emu_dyn_entry_t::*member,
                  enc_host_mem_t* dyn, size_t data_type_sz, int rank, int rank_n) {
  nrt_emu_dyn_entry_t* entry = lookup(fn, dyn, data_type_sz, rank, rank_n);
  if (entry == nullptr) return 0;
  return to_bytes(fn, field, __atomic_load_n(&(entry->*member), __ATOMIC_ACQUIRE), data_type_sz,
                  rank);
}

}  // namespace

NRT_EMU_API size_t nec_get_dynamic_send_size_bytes(enc_host_mem_t* dyn_input, size_t data_type_sz,
                                                   int dst_rank, int rank_n) {
  return read_bytes("nec_get_dynamic_send_size_bytes", "send_count",
                    &nrt_emu_dyn_entry_t::send_count, dyn_input, data_type_sz, dst_rank, rank_n);
}

NRT_EMU_API size_t nec_get_dynamic_send_offset_bytes(enc_host_mem_t* dyn_input, size_t data_type_sz,
                                                     int dst_rank, int rank_n) {
  return read_bytes("nec_get_dynamic_send_offset_bytes", "send_offset",
                    &nrt_emu_dyn_entry_t::send_offset, dyn_input, data_type_sz, dst_rank, rank_n);
}

NRT_EMU_API size_t nec_get_dynamic_recv_offset_bytes(enc_host_mem_t* dyn_input, size_t data_type_sz,
                                                     int src_rank, int rank_n) {
  return read_bytes("nec_get_dynamic_recv_offset_bytes", "recv_offset",
                    &nrt_emu_dyn_entry_t::recv_offset, dyn_input, data_type_sz, src_rank, rank_n);
}

NRT_EMU_API void nec_set_recv_size_bytes(enc_host_mem_t* dyn_input, size_t recv_size_bytes,
                                         size_t data_type_sz, int src_rank, int rank_n) {
  const char* fn = "nec_set_recv_size_bytes";
  nrt_emu_dyn_entry_t* entry = lookup(fn, dyn_input, data_type_sz, src_rank, rank_n);
  if (entry == nullptr) return;
  if (recv_size_bytes % data_type_sz != 0) {
    nrt_emu::log::message(Level::Error,
                          "%s: %zu bytes received from peer %d is not a whole number of "
                          "%zu-byte elements; recv_count left unchanged",
                          fn, recv_size_bytes, src_rank, data_type_sz);
    return;
  }
  __atomic_store_n(&entry->recv_count, static_cast<uint64_t>(recv_size_bytes / data_type_sz),
                   __ATOMIC_RELEASE);
}
