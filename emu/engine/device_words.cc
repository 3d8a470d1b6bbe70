#include "device_words.h"

namespace nrt_emu::engine {

NetBlock make_block(const BlockOpSpec& spec) {
  NetBlock b;
  net_ops_info_t& op = b.op;
  op.inc_send_handshake = spec.sems[0];
  op.inc_send_complete = spec.sems[1];
  op.inc_recv_handshake = spec.sems[2];
  op.inc_recv_complete = spec.sems[3];
  op.tx_entry_cnt = spec.tx;
  op.rx_entry_cnt = spec.rx;
  op.net_idx_loop_size = kIndexLoop;
  op.initial_send_credits = spec.credits;
  op.ending_recv_credits = 1;
  op.data_type_sz = spec.data_type_sz;
  op.variable_peer = spec.variable_peer;
  op.basic_block_id = spec.basic_block_id;
  op.func_rel_op_idx = spec.func_rel_op_idx;
  op.unrolled_count = 1;
  op.enc_channel = spec.enc_channel;
  return b;
}

void add_send(NetBlock& b, uint8_t* slot, void* mhandle, uint64_t bytes, int dst_rank) {
  net_src_addr_t e{};
  e.host_addr = slot;
  e.nccl_mhandle = mhandle;
  e.size = static_cast<uint32_t>(bytes);
  e.mark = NET_TRANSFER;
  e.dst_rank = dst_rank;
  b.src.push_back(e);
}

void add_recv(NetBlock& b, uint8_t* slot, void* mhandle, uint64_t bytes, int src_rank) {
  net_dest_addr_t e{};
  e.host_addr = slot;
  e.nccl_mhandle = mhandle;
  e.size = static_cast<uint32_t>(bytes);
  e.mark = NET_TRANSFER;
  e.src_rank = src_rank;
  b.dst.push_back(e);
}

void close_fifos(NetBlock& b) {
  net_src_addr_t sc{};
  sc.dst_rank = -1;
  sc.mark = NET_OP_COMPLETE;
  if (b.op.tx_entry_cnt > 0) b.src.push_back(sc);
  sc.mark = EXEC_COMPLETE;
  b.src.push_back(sc);
  net_dest_addr_t dc{};
  dc.src_rank = -1;
  dc.mark = NET_OP_COMPLETE;
  if (b.op.rx_entry_cnt > 0) b.dst.push_back(dc);
  dc.mark = EXEC_COMPLETE;
  b.dst.push_back(dc);
}

NetTask::~NetTask() {
  if (status_ == nullptr) return;
  // Left before the task ended (an error): the worker takes it back now.
  if (!done()) nrt_emu_proxy_stop_helping(proxy_);
  nrt_emu_proxy_status_free(status_);
}

Status NetTask::submit(nrt_emu_proxy_t* proxy, const std::vector<const NetBlock*>& blocks,
                       const std::vector<volatile uint32_t*>& triggers,
                       const std::vector<volatile uint32_t*>& sems, uint64_t exec_id) {
  if (blocks.empty()) return {};
  if (blocks.size() > NRT_EMU_MAX_STREAMS || triggers.size() != blocks.size())
    return engine_error("more network blocks than proxy streams");
  for (volatile uint32_t* w : sems) __atomic_store_n(w, 0u, __ATOMIC_RELEASE);
  std::vector<nrt_emu_proxy_stream_t> streams;
  nrt_emu_network_task_t task{};
  for (size_t i = 0; i < blocks.size(); ++i) {
    nrt_emu_proxy_arm_trigger(triggers[i]);
    streams.push_back({static_cast<uint32_t>(i), &blocks[i]->block, 1});
    task.trigger_words[i] = triggers[i];
  }
  task.streams = streams.data();
  task.streams_n = static_cast<int>(streams.size());
  task.device_gated = true;
  task.exec_id = exec_id;
  proxy_ = proxy;
  if (NRT_STATUS s = nrt_emu_proxy_submit(proxy, &task, &status_); s != NRT_SUCCESS)
    return engine_error("the proxy worker refused the network task (status " + std::to_string(s) +
                        "; the runtime log says why)");
  for (volatile uint32_t* t : triggers) __atomic_store_n(t, 1u, __ATOMIC_RELEASE);
  return {};
}

bool NetTask::done() const {
  return status_ == nullptr || nrt_emu_proxy_run_state(status_) == NRT_EMU_TASK_DONE;
}

Status NetTask::failure() {
  if (status_ == nullptr || checked_) return {};
  checked_ = true;
  // The proxy may finish first (the device's last steps can be direct
  // hops); only a failure stops the device.
  if (nrt_emu_proxy_wait(status_, 0) != NRT_SUCCESS)
    return engine_error(nrt_emu_proxy_status_reason(status_));
  return {};
}

Status NetTask::finish() {
  if (status_ == nullptr) return {};
  if (nrt_emu_proxy_wait(status_, 1000) != NRT_SUCCESS)
    return engine_error(nrt_emu_proxy_status_reason(status_));
  return {};
}

}  // namespace nrt_emu::engine
