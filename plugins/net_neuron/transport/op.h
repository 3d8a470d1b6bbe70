// One direction of one registered basic block: the state behind
// netNeuronSendProxy / netNeuronRecvProxy (the original's ncclProxyArgs
// Neuron tail plus its requestTracker). The host ticks it with
// progress() once per proxy tick and calls rearm() after every execution.
//
// Files: op_build.cc resolves the FIFOs once (create), op.cc holds the walk
// shared by both directions, send_proxy.cc / recv_proxy.cc post the verbs,
// reaper.cc is pollPosted, sidelink.cc the Trn2/Trn3 iread confirmation,
// index_words.cc ringGetPending.
#pragma once

#include "connector.h"
#include "index_words.h"

#include <nccom/transport_plugin.h>
#include <nccom/util/result.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nccom::net_neuron {

// reqStage: the stage of one requestTracker slot.
enum class Stage : int {
  None = 0,
  Recv = 1,
  RecvDone = 2,
  Flush = 3,
  Send = 4,
  Empty = 5,
  Done = 6,
  Error = 7
};
const char* stage_name(Stage s);

inline constexpr uint64_t kRingSlots = 128;  // NCCL_NET_NEURON_MAX_REQUESTS
inline constexpr int kDataTag = 0;           // docs/decisions/net-neuron-transport.md, "Tags"
inline constexpr int kSidelinkTag = 1;

// requestInfo: one ring slot, one NET_TRANSFER descriptor (or the sidelink
// announcement, `control`).
struct RequestInfo {
  void* req = nullptr;  // plugin request (NULL: none in flight)
  Stage state = Stage::None;
  Connector* conn = nullptr;
  void* addr = nullptr;
  int size = 0;       // posted size; after a receive, the bytes received
  int expected = -1;  // static receive: bytes the descriptor promises
  void* mhandle = nullptr;
  uint32_t complete_report = 0;  // semaphore units credited when the slot retires
  uint32_t net_op_idx = 0;
  uint64_t fifo_idx = 0;
  bool control = false;
  bool dynamic = false;
};

// What the FIFO says about one entry, resolved at create time.
struct EntryPlan {
  uint32_t mark = 0;
  uint32_t op = 0;            // owning op (EXEC_COMPLETE: the last op before it)
  Connector* conn = nullptr;  // NET_TRANSFER: the connection it travels on
  int word = -1;              // the index word that publishes it; -1: published implicitly
};

struct OpPlan {
  bool used = false;              // the op has entries in this direction's FIFO
  uint32_t transfers = 0;         // its NET_TRANSFER entries in this FIFO
  bool closed = false;            // its NET_OP_COMPLETE was seen (create-time check)
  enc_host_mem_t* dyn = nullptr;  // dynamic-size input (dynamic ops)
};

class NetOp {
 public:
  static Result<NetOp*> create(const ConnectorRegistry& registry,
                               const nccom_transport_comm_t* comm, nccom_transport_direction_t dir,
                               const net_ops_info_t* ops, int ops_n, const void* fifo, int fifo_n);
  ~NetOp();

  Status progress(bool* idle, bool* execution_done);
  Status rearm();
  std::string describe() const;
  // The peer and channel of the oldest request in flight, or else of the
  // next descriptor's connection; false when neither names one.
  bool waiting_on(int& peer, int& channel) const;
  // Where that wait sits, for the health report ("" when not in the plugin).
  std::string waiting_in() const;

 private:
  enum class Phase { FirstTouch, Steady, Finished };

  NetOp() = default;
  // op_build.cc: create's walk over the FIFO, one entry at a time.
  struct Walk {
    int last_word = -1;
    uint32_t last_op = 0;
    int64_t open_op = -1;  // the op with transfers not yet closed
  };
  Status plan_entry(const ConnectorRegistry& registry, uint64_t i, Walk& w);
  Status check_mark(uint64_t i, const std::string& at, uint32_t op_idx, const Walk& w) const;
  Status first_use(OpPlan& opp, const net_ops_info_t& info, const enc_net_connector_t* nc,
                   const std::string& op_at);
  Result<Connector*> connection_of(const ConnectorRegistry& registry, const net_ops_info_t& info,
                                   const enc_channel_prefix_t* ch, const enc_net_connector_t* nc,
                                   int peer_rank, const std::string& op_at) const;
  bool is_send() const { return dir_ == NCCOM_TRANSPORT_SEND; }
  const net_src_addr_t& src(uint64_t i) const {
    return static_cast<const net_src_addr_t*>(fifo_)[i];
  }
  const net_dest_addr_t& dst(uint64_t i) const {
    return static_cast<const net_dest_addr_t*>(fifo_)[i];
  }
  uint64_t in_flight() const { return posted_ - done_; }
  RequestInfo& slot(uint64_t counter) { return ring_[counter % kRingSlots]; }

  // op.cc
  Status step(bool* moved, bool* execution_done);
  void first_touch();
  void enter_op(uint32_t op);
  void enter_next_op_after(uint64_t fifo_idx);
  Status walk(bool* moved, bool* execution_done);
  Status claim(Connector* c);
  void release_connectors();
  Error entry_error(uint64_t fifo_idx, const Connector* c, const std::string& what) const;
  void signal(volatile uint32_t* sem, uint32_t n);
  // send_proxy.cc / recv_proxy.cc: post the verb of one NET_TRANSFER entry.
  // *posted = false when the plugin returned a NULL request (retry next tick).
  Status post_send(uint64_t i, bool* posted);
  Status post_recv(uint64_t i, bool* posted);
  Status prepost(bool* moved);
  bool can_prepost(uint64_t i) const;
  // reaper.cc (pollPosted)
  Status reap(bool* moved);
  Status test_slot(RequestInfo& r, bool* moved);
  Status received_size(RequestInfo& r, int size) const;
  void retire(RequestInfo& r);
  // sidelink.cc
  bool sidelink_active(const Connector* c) const;
  Status sidelink_announce(Connector* c, uint64_t fifo_idx, bool* posted);
  Status sidelink_listen(Connector* c, uint64_t fifo_idx, bool* posted);
  Status sidelink_accept(RequestInfo& r);
  Status sidelink_confirm(RequestInfo& r);
  Status sidelink_check(RequestInfo& r);
  Status verb_error(const RequestInfo& r, const char* verb, ncclResult_t rc) const;
  // Semaphore increments of one reap, merged per target (counts stay exact).
  void add_signal(volatile uint32_t* sem, uint32_t n);
  void flush_signals();

  const nccom_transport_comm_t* comm_ = nullptr;
  const nccom_transport_net_t* net_ = nullptr;
  nccom_transport_direction_t dir_ = NCCOM_TRANSPORT_SEND;
  const net_ops_info_t* ops_ = nullptr;
  int ops_n_ = 0;
  const void* fifo_ = nullptr;
  uint64_t fifo_n_ = 0;
  std::vector<EntryPlan> entries_;
  std::vector<OpPlan> op_plans_;
  IndexWords words_;
  std::vector<Connector*> connectors_;  // distinct connections this op posts on

  // Per execution (reset by rearm).
  Phase phase_ = Phase::FirstTouch;
  std::array<RequestInfo, kRingSlots> ring_{};
  uint64_t posted_ = 0;            // ring producer
  uint64_t done_ = 0;              // ring consumer
  uint64_t fifo_idx_ = 0;          // addr_fifo_idx: next entry to consume
  uint64_t prepost_idx_ = 0;       // pre_post_fifo_idx: next entry early posting may post
  int64_t cur_op_ = -1;            // cur_net_op_idx (-1: none entered yet)
  std::vector<uint32_t> retired_;  // per op: NET_TRANSFER slots retired (cur_net_op_compl_cnt)
  uint64_t executions_ = 0;
  volatile uint32_t* signal_sem_ = nullptr;
  uint32_t signal_n_ = 0;
  std::optional<Error> failed_;
};

}  // namespace nccom::net_neuron
