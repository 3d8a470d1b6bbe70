// Builds well-formed descriptor FIFOs the way libnrt's producer does (the
// net_addr_mark_t FIFO grammar), so tests can start from a valid block and
// break one rule.
#pragma once

#include "proxy/fifo.h"

#include <nccom/nrt_abi.h>

#include <cstdint>
#include <type_traits>
#include <vector>

namespace nccom::proxy::testing {

struct BlockBuilder {
  std::vector<net_ops_info_t> ops;
  std::vector<net_src_addr_t> src;
  std::vector<net_dest_addr_t> dst;
  int channel_token = 0;  // stands in for libnrt's enc_channel

  // Opens an op with `sends` transfers and `recvs` receives of `size` bytes.
  BlockBuilder& op(uint32_t sends, uint32_t recvs, uint32_t size = 64) {
    net_ops_info_t o{};
    o.net_idx_loop_size = kMaxIndexLoopSize;
    o.initial_send_credits = 8;
    o.ending_recv_credits = 8;
    o.data_type_sz = 4;
    o.unrolled_count = 1;
    o.enc_channel = &channel_token;
    o.func_rel_op_idx = static_cast<uint32_t>(ops.size()) + 100;
    const uint32_t idx = static_cast<uint32_t>(ops.size());
    ops.push_back(o);
    for (uint32_t i = 0; i < sends; ++i) {
      net_src_addr_t e{};
      e.net_op_idx = idx;
      e.size = size;
      e.mark = NET_TRANSFER;
      e.dst_rank = 1;
      src.push_back(e);
      ++ops.back().tx_entry_cnt;
    }
    for (uint32_t i = 0; i < recvs; ++i) {
      net_dest_addr_t e{};
      e.net_op_idx = idx;
      e.size = size;
      e.mark = NET_TRANSFER;
      e.src_rank = 1;
      dst.push_back(e);
      ++ops.back().rx_entry_cnt;
    }
    if (sends > 0) src.push_back(terminator<net_src_addr_t>(idx, NET_OP_COMPLETE));
    if (recvs > 0) dst.push_back(terminator<net_dest_addr_t>(idx, NET_OP_COMPLETE));
    return *this;
  }

  // Appends the EXEC_COMPLETE entries that end both address FIFOs.
  BlockBuilder& end() {
    src.push_back(terminator<net_src_addr_t>(0, EXEC_COMPLETE));
    dst.push_back(terminator<net_dest_addr_t>(0, EXEC_COMPLETE));
    return *this;
  }

  BlockFifos fifos() const {
    return BlockFifos{ops.data(), static_cast<int>(ops.size()),
                      src.data(), static_cast<int>(src.size()),
                      dst.data(), static_cast<int>(dst.size())};
  }

  template <class Entry>
  static Entry terminator(uint32_t idx, net_addr_mark_t mark) {
    Entry e{};
    e.net_op_idx = idx;
    e.size = 0;
    e.mark = mark;
    if constexpr (std::is_same_v<Entry, net_src_addr_t>) {
      e.dst_rank = -1;
    } else {
      e.src_rank = -1;
    }
    return e;
  }
};

}  // namespace nccom::proxy::testing
