// device_words.h — what both executors (ring programs, peer links) share:
// the device's view of its words (semaphores, index words, DIRECT
// counters) and the network task of an execution.
#pragma once

#include "links.h"
#include "plan.h"
#include "status.h"

#include <nrt_emu.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace nrt_emu::engine {

inline constexpr uint32_t kIndexLoop = 512;  // net_idx_loop_size of every op

inline uint32_t load32(const volatile uint32_t* w) { return __atomic_load_n(w, __ATOMIC_ACQUIRE); }
inline uint64_t load64(const volatile uint64_t* w) { return __atomic_load_n(w, __ATOMIC_ACQUIRE); }
inline void store64(volatile uint64_t* w, uint64_t v) { __atomic_store_n(w, v, __ATOMIC_RELEASE); }

// DIRECT links: slice number g (cumulative on the link) has arrived in its
// slot once the slot's stamp carries g's mark. The sender writes the payload
// (or the SliceRef) first, then seal_slice; a slot's previous mark is that
// of slice g - kSlots (or 0 in a slot never used), never g's.
inline uint16_t slice_mark(uint64_t g) { return static_cast<uint16_t>(g + 1); }
inline bool slice_arrived(const uint8_t* slot, uint64_t g) {
  const auto* mark = reinterpret_cast<const uint16_t*>(slot + offsetof(SliceStamp, mark));
  return __atomic_load_n(mark, __ATOMIC_ACQUIRE) == slice_mark(g);
}
inline void seal_slice(uint8_t* slot, const SliceStamp& st, uint64_t g) {
  constexpr size_t kMarkAt = offsetof(SliceStamp, mark), kAfter = kMarkAt + sizeof st.mark;
  std::memcpy(slot, &st, kMarkAt);
  std::memcpy(slot + kAfter, reinterpret_cast<const uint8_t*>(&st) + kAfter, sizeof st - kAfter);
  __atomic_store_n(reinterpret_cast<uint16_t*>(slot + kMarkAt), slice_mark(g), __ATOMIC_RELEASE);
}

// DIRECT links: whether slice g has a free slot at the receiver. `seen` is
// the head as last read (never above it); the receiver's line is read again
// only when the slots known to be free run out, since the receiver writes it
// on every slice it takes.
inline bool slot_free(uint64_t g, uint64_t& seen, const volatile uint64_t* head) {
  return g - seen < kSlots || g - (seen = load64(head)) < kSlots;
}

// The index word the device advances for one direction of a connector.
inline volatile uint32_t* post_word(enc_net_connector_t* c, bool send) {
  auto* hm = static_cast<enc_net_host_memory_t*>(c->net_host_mem.va);
  return send ? &hm->post_send[0].index : &hm->post_recv[0].index;
}

// One FIFO entry released to the proxy (docs/decisions/net-neuron-transport.md,
// "Publication").
inline void publish(volatile uint32_t* word) {
  __atomic_store_n(word, (load32(word) + 1) % kIndexLoop, __ATOMIC_RELEASE);
}

// A one-op basic block (one op per direction's FIFO, EXEC_COMPLETE last).
struct BlockOpSpec {
  volatile uint32_t* sems[4];  // send handshake, send complete, receive handshake, receive complete
  uint32_t tx = 0, rx = 0;     // NET_TRANSFER entries per direction
  uint32_t credits = 0;        // initial_send_credits = the sender's slots
  size_t data_type_sz = 0;
  bool variable_peer = false;
  uint32_t basic_block_id = 0, func_rel_op_idx = 0;
  void* enc_channel = nullptr;
};
NetBlock make_block(const BlockOpSpec& spec);
void add_send(NetBlock& b, uint8_t* slot, void* mhandle, uint64_t bytes, int dst_rank);
void add_recv(NetBlock& b, uint8_t* slot, void* mhandle, uint64_t bytes, int src_rank);
// NET_OP_COMPLETE for each direction with transfers, then EXEC_COMPLETE.
void close_fifos(NetBlock& b);

// The network task of one execution: one stream per block, gated on the
// device's trigger words, as libnrt's network task step() is. No blocks, no task.
class NetTask {
 public:
  NetTask() = default;
  NetTask(const NetTask&) = delete;
  NetTask& operator=(const NetTask&) = delete;
  ~NetTask();
  // Zeroes `sems`, arms the triggers, submits, then posts the triggers.
  Status submit(nrt_emu_proxy_t* proxy, const std::vector<const NetBlock*>& blocks,
                const std::vector<volatile uint32_t*>& triggers,
                const std::vector<volatile uint32_t*>& sems, uint64_t exec_id);
  bool active() const { return status_ != nullptr; }
  bool done() const;  // no task, or the worker finished it
  // While the task runs: steps the proxy on this thread (true: it moved).
  bool help() { return status_ != nullptr && nrt_emu_proxy_help(proxy_) != 0; }
  // Once the task is done: "" when it succeeded, else why it failed (the
  // first call only; later calls answer "").
  Status failure();
  // At the end of an execution: waits (bounded) and reports a failure.
  Status finish();

 private:
  nrt_emu_proxy_t* proxy_ = nullptr;
  nrt_emu_proxy_status_t* status_ = nullptr;
  bool checked_ = false;
};

}  // namespace nrt_emu::engine
