// The three descriptor FIFOs of one basic block and the
// grammar they must follow before the proxy walks them.
//
// The runtime hands libnccom raw arrays; the proxy later indexes them by the
// counts and indices they contain. Validation at registration is what keeps
// a malformed FIFO from turning into an out-of-bounds walk many ticks later:
// every rule the walk relies on is checked here, once, with an error that
// names the FIFO, the entry and the rule.
#pragma once

#include <nccom/nrt_abi.h>
#include <nccom/util/result.h>

#include <cstdint>

namespace nccom::proxy {

inline constexpr uint32_t kMaxStreams = 4;          // NEC_MAX_STREAM_N
inline constexpr uint32_t kNoBlock = 0xFFFFFFFFu;   // "no basic block"
inline constexpr uint32_t kMaxIndexLoopSize = 512;  // NET_INDEX_LOOP_SIZE
inline constexpr uint32_t kMaxCredits = 0x1FF;      // libnrt's assert on credits

struct BlockFifos {
  const net_ops_info_t* ops = nullptr;
  int ops_n = 0;
  const net_src_addr_t* src = nullptr;
  int src_n = 0;
  const net_dest_addr_t* dst = nullptr;
  int dst_n = 0;
};

// Checks, in order:
//  * counts are positive and arrays non-NULL;
//  * the last entry of each address FIFO is EXEC_COMPLETE, and no other is;
//  * every mark is NET_TRANSFER, NET_OP_COMPLETE or EXEC_COMPLETE;
//  * every NET_TRANSFER / NET_OP_COMPLETE entry names an op < ops_n, and op
//    indices never go backwards along a FIFO (ops are opened in order);
//  * an op's NET_TRANSFER entries in the src (dst) FIFO number exactly its
//    tx_entry_cnt (rx_entry_cnt), each op is closed at most once per FIFO,
//    after its transfers, and an op with transfers is closed;
//  * terminators carry size 0;
//  * per op: enc_channel non-NULL, 0 < net_idx_loop_size <= 512,
//    0 < initial_send_credits, ending_recv_credits <= 0x1FF, a non-zero
//    data_type_sz when sizes are dynamic, unrolled_count >= 1.
// `where` prefixes every message (e.g. "stream 1, basic block 7").
Status validate_block(const BlockFifos& fifos, const char* where);

}  // namespace nccom::proxy
