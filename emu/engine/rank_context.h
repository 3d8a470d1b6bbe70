// rank_context.h — who an engine rank is and the handles every part of it
// uses. Ccom fills it during bring-up and owns it; its collaborators read it
// by reference.
#pragma once

#include <nrt_emu.h>

#include <cstdint>

namespace nrt_emu::engine {

struct RankContext {
  const nccom_export_table_t* t = nullptr;  // libnccom, as the emu's loader loaded it
  void* comm = nullptr;                     // this rank's communicator
  int rank = 0, n = 1;
  int host = 0, local = 0, local_n = 1;    // its host, and its place among that host's ranks
  uint64_t slot_bytes = 0;                 // NEURON_RT_EMU_SLICE_BYTES, a multiple of 64
  nrt_emu_devmem_t* engine_mem = nullptr;  // slots, counters, semaphores, connectors
  nrt_emu_devmem_t* user_mem = nullptr;    // nrt_emu_ccom_alloc
  // The shared proxy worker: acquired at init when a ring channel crosses
  // the network, else by the first peer link that does.
  nrt_emu_proxy_t* proxy = nullptr;
};

}  // namespace nrt_emu::engine
