// The scripted device: two ranks, one channel, a ring of two (each rank sends
// to and receives from the other). It builds each rank's three FIFOs the way
// libnrt's producer does, registers one SEND and one RECV op per rank with
// the transport, then per execution publishes FIFO entries by advancing the
// host index words — sends only while it holds send credits (handshake
// grants + completions), receives within a window — ticks the four ops, and
// checks every semaphore total and every byte received.
#pragma once

#include "harness.h"

#include <algorithm>
#include <array>
#include <functional>

namespace nn_test {

struct OpSpec {
  std::vector<uint32_t> sizes;  // one slice each (dynamic: the size the device asks for)
  bool early_send = false;
  bool early_recv = false;
  bool dynamic = false;
  uint32_t credits = 4;  // initial_send_credits
  uint32_t ending = 2;   // ending_recv_credits
};

struct BlockSpec {
  std::vector<OpSpec> ops;
  bool rank1_sends = true;         // false: only rank 0 sends (one-way)
  bool shared_semaphores = false;  // ring identity: handshake and complete share one word
  uint32_t recv_window = 1000;     // receive entries the device publishes ahead of arrivals
  uint32_t loop_size = 512;
  int fold_n = 1;
  int sidelink = 0;
  bool variable_peer = false;
  uint32_t publish_limit = 0xFFFFFFFF;  // transfers each device direction publishes at most    //
                                        // MESH, connections found by rank (nccl_connector NULL)
  const ncclNet_v6_t* net_override = nullptr;  // e.g. a wrapped table
};

class TwoRanks {
 public:
  TwoRanks(const ncclNet_v6_t* net, BlockSpec spec);
  ~TwoRanks();

  // One execution: publish, tick all four ops until each reports
  // execution_done; then check semaphores and bytes and re-arm.
  ::testing::AssertionResult run_execution(uint64_t tick_budget = 1000000);
  // The same with one thread per rank.
  ::testing::AssertionResult run_execution_threaded(uint64_t tick_budget = 1000000);
  // Ticks the ops once (devices publish first); returns the first error.
  ::testing::AssertionResult tick_once(bool* all_done);
  // Frees rank r's ops and connections, as a peer process that goes away.
  void close_rank(int r);
  std::string last_error() const { return last_error_[0] + last_error_[1]; }
  int executions() const { return exec_; }
  DeviceChannel& channel(int r) { return *chan_[r]; }
  uint32_t max_preposted_arrivals() const { return std::max(max_ahead_[0], max_ahead_[1]); }
  void* op(int r, nccom_transport_direction_t dir) { return ops_[r][dir]; }
  void set_publish_limit(uint32_t n) { spec_.publish_limit = n; }
  // Semaphore k (0 send_handshake, 1 send_complete, 2 recv_handshake,
  // 3 recv_complete) of rank r's op o.
  uint32_t semaphore(int r, uint32_t o, int k) const { return load(&sems_[r][o].w[k]); }

 private:
  struct Sems {
    alignas(64) uint32_t w[4] = {};  // send_hs, send_cmp, recv_hs, recv_cmp
  };
  struct Slice {
    uint32_t op = 0;
    uint32_t size = 0;      // bytes sent
    uint32_t capacity = 0;  // descriptor size
    size_t send_off = 0;    // descriptor host_addr offset in the send arena
    size_t recv_off = 0;
    size_t dyn_send_off = 0;  // dynamic offsets within the slot
    size_t dyn_recv_off = 0;
  };
  struct DirState {
    size_t next = 0;                  // next FIFO entry to publish
    std::vector<uint32_t> published;  // per op, transfers published
  };

  void build(int r);
  ::testing::AssertionResult tick_rank(int r, bool* rank_done);
  ::testing::AssertionResult finish_execution();
  void reset_for_execution();
  void publish(int r, bool send);
  uint32_t credits(int r, uint32_t op) const;
  uint32_t arrived(int r, uint32_t op) const;
  ::testing::AssertionResult check(int r);
  bool sends(int r) const { return r == 0 || spec_.rank1_sends; }

  BlockSpec spec_;
  std::vector<std::unique_ptr<Rank>> ranks_;
  std::array<Link, 2> links_{};  // links_[r]: r -> 1-r
  std::array<std::unique_ptr<DeviceChannel>, 2> chan_{};
  std::array<Arena, 2> send_arena_{};
  std::array<Arena, 2> recv_arena_{};
  std::array<std::vector<Sems>, 2> sems_{};
  std::array<std::vector<net_ops_info_t>, 2> ops_info_{};
  std::array<std::vector<net_src_addr_t>, 2> src_{};
  std::array<std::vector<net_dest_addr_t>, 2> dst_{};
  std::vector<Slice> slices_;                  // the same plan on both ranks
  std::array<std::array<void*, 2>, 2> ops_{};  // [rank][direction]
  std::array<std::array<bool, 2>, 2> done_{};
  std::array<std::array<DirState, 2>, 2> dev_{};  // [rank][direction]
  int exec_ = 0;
  std::array<uint32_t, 2> max_ahead_{};  // per rank: each rank's thread writes its own
  std::array<std::string, 2> last_error_;
};

}  // namespace nn_test
