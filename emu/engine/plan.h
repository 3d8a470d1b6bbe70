// plan.h — one collective shape, built once and executed many times: the
// channel programs or peer transfers of a call and the proxy's basic blocks.
#pragma once

#include "program.h"

#include <nrt_emu.h>

#include <cstdint>
#include <vector>

namespace nrt_emu::engine {

struct PeerItem {
  int peer;
  uint64_t off;  // elements into the input (send) or output (receive)
  uint64_t elems;
  // Dependent schedules (recursive doubling): a send goes only once the
  // plan's first `after` receives are done, and reads the output buffer
  // (`from_out`); a receive is taken only once the first `after` sends are
  // out (they read what it changes), combines into the output (`reduce`)
  // instead of overwriting it, and finishes an average over the ranks (`avg`).
  uint64_t after = 0;
  bool from_out = false;
  bool reduce = false;
  bool avg = false;
};

// One collective shape, built once and executed many times.
struct NetBlock {
  int channel = 0;
  net_ops_info_t op{};
  std::vector<net_src_addr_t> src;
  std::vector<net_dest_addr_t> dst;
  nrt_emu_proxy_block_t block{};
};

struct Plan {
  CollDesc desc;
  const void* send = nullptr;
  void* recv = nullptr;
  int send_to = -1, recv_from = -1;
  bool kanga = false;                 // progs run over the kangaRing lanes, not the ring channels
  std::vector<ChannelProgram> progs;  // per engine channel (or kangaRing lane)
  std::vector<NetBlock> blocks;       // at most one per channel
  uint64_t uses = 0;
  // Peer collectives (all-to-all, permute) instead of channel programs.
  bool peer = false;
  bool rd = false;                     // ... by recursive doubling (rd_executor.cc)
  std::vector<PeerItem> sends, recvs;  // in the order every rank agrees on
  uint64_t copy_src = 0, copy_dst = 0, copy_elems = 0;  // this rank's own block
  std::vector<NetBlock> peer_block;                     // zero or one
};

}  // namespace nrt_emu::engine
