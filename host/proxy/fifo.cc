#include "proxy/fifo.h"

#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace nccom::proxy {
namespace {

Error refuse(const char* where, const std::string& what) {
  return make_error(NRT_INVALID, std::string("neuronStartNetworkProxy (") + where + "): " + what +
                                     "; the basic block was not registered");
}

// The mark as the bytes say, without trusting them to be an enumerator
// (loading an out-of-range value into the enum type would itself be UB).
template <class Entry>
uint32_t mark_of(const Entry& e) {
  uint32_t raw = 0;
  std::memcpy(&raw, &e.mark, sizeof raw);
  return raw;
}

const char* mark_name(uint32_t m) {
  switch (m) {
    case NET_TRANSFER: return "NET_TRANSFER";
    case NET_OP_COMPLETE: return "NET_OP_COMPLETE";
    case EXEC_COMPLETE: return "EXEC_COMPLETE";
    default: return "an unknown mark";
  }
}

// What one address FIFO says about each op.
struct OpUse {
  uint32_t transfers = 0;
  int closed_at = -1;  // index of the NET_OP_COMPLETE entry, -1 if none
};

// Walks one address FIFO (src or dst: both have net_op_idx, size, mark at
// the same meaning). `Entry` is net_src_addr_t or net_dest_addr_t.
template <class Entry>
Status walk(const Entry* fifo, int n, const char* name, const char* count_field,
            const net_ops_info_t* ops, int ops_n, const char* where) {
  std::vector<OpUse> use(static_cast<size_t>(ops_n));
  uint32_t last_op = 0;
  for (int i = 0; i < n; ++i) {
    const Entry& e = fifo[i];
    const std::string at = std::string(name) + "[" + std::to_string(i) + "]";
    const uint32_t mark = mark_of(e);
    if (mark != NET_TRANSFER && mark != NET_OP_COMPLETE && mark != EXEC_COMPLETE) {
      return refuse(where, at + ".mark is " + std::to_string(mark) +
                               ", not NET_TRANSFER(0), NET_OP_COMPLETE(1) or EXEC_COMPLETE(2)");
    }
    if (mark == EXEC_COMPLETE) {
      if (i != n - 1) {
        return refuse(where, at + " is EXEC_COMPLETE but only the last entry (" +
                                 std::to_string(n - 1) + ") may end the execution");
      }
      continue;
    }
    if (e.net_op_idx >= static_cast<uint32_t>(ops_n)) {
      return refuse(where, at + ".net_op_idx " + std::to_string(e.net_op_idx) +
                               " is out of range: the ops FIFO has " + std::to_string(ops_n) +
                               " entries");
    }
    if (e.net_op_idx < last_op) {
      return refuse(where, at + ".net_op_idx " + std::to_string(e.net_op_idx) +
                               " goes back after op " + std::to_string(last_op) +
                               ": ops are opened in order");
    }
    last_op = e.net_op_idx;
    OpUse& u = use[e.net_op_idx];
    if (u.closed_at >= 0) {
      return refuse(where, at + " (" + mark_name(mark) + ") follows op " +
                               std::to_string(e.net_op_idx) + "'s NET_OP_COMPLETE at " + name +
                               "[" + std::to_string(u.closed_at) + "]");
    }
    if (mark == NET_TRANSFER) {
      ++u.transfers;
    } else {
      if (e.size != 0) {
        return refuse(where, at + " is NET_OP_COMPLETE with size " + std::to_string(e.size) +
                                 "; terminators carry size 0");
      }
      u.closed_at = i;
    }
  }
  if (fifo[n - 1].size != 0) {
    return refuse(where, std::string(name) + "[" + std::to_string(n - 1) +
                             "] is EXEC_COMPLETE with size " + std::to_string(fifo[n - 1].size) +
                             "; terminators carry size 0");
  }
  for (int op = 0; op < ops_n; ++op) {
    const OpUse& u = use[static_cast<size_t>(op)];
    const uint32_t declared =
        std::is_same_v<Entry, net_src_addr_t> ? ops[op].tx_entry_cnt : ops[op].rx_entry_cnt;
    if (u.transfers != declared) {
      return refuse(where, std::string("ops[") + std::to_string(op) + "]." + count_field + " is " +
                               std::to_string(declared) + " but " + name + " holds " +
                               std::to_string(u.transfers) + " NET_TRANSFER entries for it");
    }
    if (u.transfers > 0 && u.closed_at < 0) {
      return refuse(where, std::string("op ") + std::to_string(op) + " has " +
                               std::to_string(u.transfers) + " transfers in " + name +
                               " but no NET_OP_COMPLETE closing it");
    }
  }
  return {};
}

Status check_op(const net_ops_info_t& op, int i, const char* where) {
  const std::string at = "ops[" + std::to_string(i) + "]";
  if (op.enc_channel == nullptr) return refuse(where, at + ".enc_channel is NULL");
  if (op.net_idx_loop_size == 0 || op.net_idx_loop_size > kMaxIndexLoopSize) {
    return refuse(where, at + ".net_idx_loop_size is " + std::to_string(op.net_idx_loop_size) +
                             ", outside 1.." + std::to_string(kMaxIndexLoopSize));
  }
  if (op.initial_send_credits == 0 || op.initial_send_credits > kMaxCredits) {
    return refuse(where, at + ".initial_send_credits is " +
                             std::to_string(op.initial_send_credits) + ", outside 1..511");
  }
  if (op.ending_recv_credits == 0 || op.ending_recv_credits > kMaxCredits) {
    return refuse(where, at + ".ending_recv_credits is " + std::to_string(op.ending_recv_credits) +
                             ", outside 1..511");
  }
  if (op.is_dynamic_send_recv_sz && op.data_type_sz == 0) {
    return refuse(where, at + " has dynamic sizes but data_type_sz 0");
  }
  if (op.unrolled_count == 0)
    return refuse(where, at + ".unrolled_count is 0; at least 1 is needed");
  return {};
}

}  // namespace

Status validate_block(const BlockFifos& f, const char* where) {
  if (f.ops == nullptr || f.ops_n <= 0) {
    return refuse(where, "the ops FIFO is empty (ops=" + std::string(f.ops ? "set" : "NULL") +
                             ", ops_n=" + std::to_string(f.ops_n) + ")");
  }
  if (f.src == nullptr || f.src_n <= 0) {
    return refuse(where, "the src FIFO is empty; it needs at least its EXEC_COMPLETE entry");
  }
  if (f.dst == nullptr || f.dst_n <= 0) {
    return refuse(where, "the dest FIFO is empty; it needs at least its EXEC_COMPLETE entry");
  }
  // The original's two assertions, with its own wording.
  if (mark_of(f.src[f.src_n - 1]) != EXEC_COMPLETE) {
    return refuse(where,
                  "net_src_addr_fifo[net_src_addr_fifo_n - 1].mark == EXEC_COMPLETE "
                  "does not hold (last src entry " +
                      std::to_string(f.src_n - 1) + " is " +
                      mark_name(mark_of(f.src[f.src_n - 1])) + ")");
  }
  if (mark_of(f.dst[f.dst_n - 1]) != EXEC_COMPLETE) {
    return refuse(where,
                  "net_dest_addr_fifo[net_dest_addr_fifo_n - 1].mark == EXEC_COMPLETE "
                  "does not hold (last dest entry " +
                      std::to_string(f.dst_n - 1) + " is " +
                      mark_name(mark_of(f.dst[f.dst_n - 1])) + ")");
  }
  for (int i = 0; i < f.ops_n; ++i) {
    if (Status s = check_op(f.ops[i], i, where); !s) return s;
  }
  if (Status s = walk(f.src, f.src_n, "src", "tx_entry_cnt", f.ops, f.ops_n, where); !s) return s;
  return walk(f.dst, f.dst_n, "dest", "rx_entry_cnt", f.ops, f.ops_n, where);
}

}  // namespace nccom::proxy
