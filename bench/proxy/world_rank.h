// World::Rank, shared by bench_world.cc (setup) and bench_tick.cc (the
// device and the ticks): one rank's communicator view, connectors, device
// channel objects, arenas, semaphores, FIFOs and ops.
#pragma once

#include "bench_world.h"
#include "plugins.h"

#include <nccom/nrt_abi.h>
#include <nccom/util/transport_net.h>

#include <vector>

namespace nccom::bench {

inline constexpr int kSendHs = 0, kSendCmp = 1, kRecvHs = 2, kRecvCmp = 3;
inline constexpr uint32_t kLoop = 512;               // net_idx_loop_size
inline constexpr uint32_t kEnding = 1;               // ending_recv_credits
inline constexpr uint32_t kStampMagic = 0x50525859;  // "PRXY"
inline constexpr uint8_t kUntouched = 0xEE;

// The head of every slice when data is checked.
struct Stamp {
  uint32_t magic, exec, slice, sender;
};

inline uint32_t load(const volatile uint32_t* w) { return __atomic_load_n(w, __ATOMIC_ACQUIRE); }

struct World::Rank {
  int r = 0;
  nccom_transport_comm_t comm{};
  nccom_transport_net_t net{};  // comm.net: the net table as the host lends it
  std::array<nccom_transport_peer_t, 2> peers{};
  void* send_conn = nullptr;  // to 1-r
  void* recv_conn = nullptr;  // from 1-r
  enc_channel_prefix_t ch{};
  enc_net_connector_t net_send{};
  enc_net_connector_t net_recv{};
  alignas(128) enc_net_host_memory_t send_words{};
  alignas(128) enc_net_host_memory_t recv_words{};
  enc_host_mem_shared_t dyn{};
  std::vector<uint8_t> send_arena, recv_arena;
  void* send_mh = nullptr;
  void* recv_mh = nullptr;
  alignas(64) uint32_t sems[4] = {};
  net_ops_info_t info{};
  std::vector<net_src_addr_t> src;
  std::vector<net_dest_addr_t> dst;
  std::array<void*, 2> ops{};  // direct mode, [direction]
  std::unique_ptr<proxy::ProxyTransport> proxy_transport;
  std::unique_ptr<proxy::Scheduler> scheduler;
  uint32_t next_send = 0, next_recv = 0;  // FIFO entries published this execution
  std::array<bool, 2> done{};
  uint64_t exec = 0;
  std::string error;

  bool fail(std::string m) {
    if (error.empty()) error = "rank " + std::to_string(r) + ": " + std::move(m);
    return false;
  }
  Stamp* stamp(std::vector<uint8_t>& arena, uint32_t i, size_t bytes) {
    return reinterpret_cast<Stamp*>(arena.data() + i * bytes);
  }
};

}  // namespace nccom::bench
