// ccom.h — one rank of the reference device engine: its communicator, its
// device memory, its links to ring neighbours and peers, and the executor
// that runs collective programs over them.
//
// Links. Every ring channel has a receive link (from prev) and a send link
// (to next). A hop libnccom connected over the network (neuronGetNetConnector
// answers a connector) is a NET link: slices go through K staging slots in
// this rank's device memory, described to libnccom's proxy as one basic block
// per channel and execution (src/dest FIFOs over the slots), published by
// advancing the connector's index words and completed through semaphores —
// the device's side of the send/recv primitives' handshake. Any other hop is a DIRECT
// link: the sender copies straight into the receiver's slots (the peer's
// device memory, mapped from its memfd); a slice has arrived when its
// stamp carries its mark (SliceStamp), and a counter in the receiver's
// memory (head) counts the slices consumed.
#pragma once

#include "../bell.h"
#include "../knobs.h"
#include "heap.h"
#include "process_watch.h"
#include "program.h"
#include "status.h"

#include <nrt_emu.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <iterator>
#include <list>
#include <memory>
#include <string>
#include <vector>

namespace nrt_emu::engine {

// Marks the start of an engine call on this thread (each nrt_emu_ccom_*
// entry point): st() names the cause libnccom forwarded since then.
void begin_call();
// "what returned status N: <the cause libnccom gave>", the way a runtime
// reports a failed libnccom call; libnccom forwards its WARN lines through
// nec_ndl_printk, so the text crosses the ABI with the status. This is the
// inside of an error; what a caller reads is cause-first (cause_first).
std::string st(const char* what, NRT_STATUS s);

// An error of this call split into its innermost cause and the context the
// engine wrapped around it: when libnccom forwarded a reason during the call
// (the newest WARN line since begin_call, preferring this thread's) and the
// message holds it after ": ", that reason is the cause and the rest of the
// message its context ("neuronInitGlobalComm returned status 2"); else the
// whole message is the cause.
struct Why {
  std::string cause;
  std::string context;  // "" when there is none
};
Why split_cause(const std::string& message);
// "CAUSE (CONTEXT)", or CAUSE alone.
std::string cause_first(const Why& why);

inline constexpr int kMaxEngineChannels = 4;  // one proxy stream per channel

// Every ring slice starts with the collective it belongs to:
// which operation, type, reduction, count and root, and the communicator's
// execution number. The receiver compares it with its own before using the
// slice, so ranks that call different collectives (or skipped one) fail
// naming the peer and both calls instead of computing wrong results. The
// slot keeps its size; a slice carries kStampBytes less payload, after the
// stamp, so that the stamp is where the receiver looks whatever size the
// sender thought the slice had. (Stamping only an execution's first slice
// gives network entries of unequal sizes, which the proxy path does not
// carry through: every slice is stamped.)
//
// On a DIRECT link the stamp is also the slice's arrival: the sender
// writes the payload, then the stamp, its `mark` last (the slice's number
// on the link plus one, mod 2^16; device_words.h), and the receiver waits
// for that mark in the slot itself, so that the line it polls is the line
// that holds the stamp and a small payload. The mark is not compared: a
// network slice carries 0.
inline constexpr uint32_t kStampMagic = 0x53434e4eu;  // "NNCS"
struct SliceStamp {
  uint32_t magic;
  uint8_t coll, dtype, op, kanga;
  int32_t root;
  uint16_t by_reference;  // DIRECT links: a SliceRef follows, not the payload
  uint16_t mark;          // DIRECT links: the slice has arrived (stored last)
  uint64_t count;
  uint64_t execution;
};
inline constexpr uint64_t kStampBytes = sizeof(SliceStamp);
static_assert(kStampBytes == 32, "the stamp's wire size");
// A slice passed by reference on a DIRECT link: the payload is final data
// in the sender's device memory (its output buffer), which the receiver
// reads there — one copy per hop instead of two. The sender never rewrites
// that data within the execution, and the slot stays taken (head) until the
// receiver has used it.
struct SliceRef {
  uint64_t offset;  // into the sender's device memory (nrt_emu_ccom_alloc's region)
  uint64_t bytes;
};
// The stamp of plan p's execution number `execution`, and its text
// ("collective #3: all-reduce of 8 x fp32, sum, root 0").
struct Plan;
class NetTask;   // device_words.h
struct Run;      // one channel's progress through one execution (execute.cc)
struct PeerRun;  // the peer links' progress through one execution (peers.cc)
SliceStamp stamp_of(const Plan& p, uint64_t execution);
std::string describe_stamp(const SliceStamp& st);
inline constexpr uint32_t kSlots = 4;  // staging slots per link

// What a rank publishes about itself at init (bootstrap all-gather).
struct PeerCard {
  uint32_t magic;
  int32_t rank;
  int32_t host;
  int32_t pid;
  int32_t fd;
  int32_t channels;
  uint64_t region_bytes;
  int32_t user_fd;  // its device memory (nrt_emu_ccom_alloc), for slices by reference
  uint64_t user_bytes;
  uint64_t slot_bytes;
  char hostname[64];
  int32_t local;  // device index on its host
  int32_t local_n;
  uint64_t pair_area;    // offset of the receive rings for same-host senders
  uint64_t pair_stride;  // one ring per sender's local rank
  // Per channel: offsets in the region of the receive slots and head.
  uint64_t recv_slots[kMaxEngineChannels];
  uint64_t head[kMaxEngineChannels];
  // kangaRing lanes (Trn3 Switch-V1, one host): their own receive links.
  int32_t kanga_lanes;
  uint32_t kanga_sum;  // checksum of the lanes' paths: every rank must use the same
  uint64_t kanga_recv_slots[kMaxEngineChannels];
  uint64_t kanga_head[kMaxEngineChannels];
  uint64_t bell;  // offset of its doorbell (bell.h)
  // The settings that decide how a collective runs, which every rank must
  // share (kAgreedSettings names them, in this order).
  uint64_t agreed[3];
};

// The knobs behind PeerCard::agreed: a rank that differs fails init naming
// the knob, the rank and both values (a difference would otherwise show up
// as a timeout: one rank waits for a recursive-doubling slice the other
// sends on the rings).
inline constexpr const char* kAgreedSettings[] = {
    knobs::declared(knobs::Var::kAllreduceRdBytes).name,
    knobs::declared(knobs::Var::kAllgatherRdBytes).name,
    knobs::declared(knobs::Var::kDirectRead).name};
static_assert(std::size(kAgreedSettings) == std::size(PeerCard{}.agreed));

struct RecvLink {
  bool net = false;
  uint8_t* slots = nullptr;  // this rank's memory
  // DIRECT (the slices' arrival is their stamp's mark)
  volatile uint64_t* head = nullptr;  // written here
  uint64_t base = 0;                  // slices received in earlier executions
  // NET
  enc_net_connector_t* conn = nullptr;
  void* mhandle = nullptr;
  volatile uint32_t* hs = nullptr;
  volatile uint32_t* cmp = nullptr;
};

struct SendLink {
  bool net = false;
  uint8_t* slots = nullptr;           // DIRECT: the peer's slots (mapped); NET: this rank's
  volatile uint64_t* head = nullptr;  // DIRECT, in the peer's memory
  uint64_t head_seen = 0;             // DIRECT: *head when last read (never above it)
  uint64_t base = 0;
  enc_net_connector_t* conn = nullptr;
  void* mhandle = nullptr;
  volatile uint32_t* hs = nullptr;
  volatile uint32_t* cmp = nullptr;
};

struct Channel {
  int id = 0;
  Ring ring;
  int prev = -1, next = -1;
  RecvLink recv;
  SendLink send;
  enc_channel_prefix_t* chan = nullptr;  // NET hops only
  volatile uint32_t* trigger = nullptr;
};

// The peer links (all-to-all, permute): to every other rank, DIRECT for a
// pair libnccom does not connect over the network, else over the MESH
// connectors of neuronExpandConnectivity. DIRECT pairs have one ring per
// (sender, receiver) in the receiver's memory; NET pairs share one ring of
// kPeerSlots send and receive slots in FIFO order (one variable-peer op).
inline constexpr uint32_t kPeerSlots = 8;

struct PeerLink {
  bool linked = false;
  bool net = false;
  // DIRECT send: the ring for this rank in the peer's memory.
  uint8_t* tx_slots = nullptr;
  volatile uint64_t* tx_head = nullptr;
  uint64_t tx_head_seen = 0;  // *tx_head when last read (never above it)
  uint64_t tx_count = 0;      // slices sent, across executions
  // DIRECT receive: the ring for the peer in this rank's memory.
  uint8_t* rx_slots = nullptr;
  volatile uint64_t* rx_head = nullptr;
  uint64_t rx_count = 0;  // slices taken, across executions
  // NET: registrations of the shared slots with this peer's comms.
  void* tx_mhandle = nullptr;
  void* rx_mhandle = nullptr;
};

struct PeerLinks {
  bool mesh = false, rdh = false;  // neuronExpandConnectivity done, these linked
  std::vector<PeerLink> peers;     // by rank
  uint8_t* tx_slots = nullptr;     // NET, shared by every NET peer
  uint8_t* rx_slots = nullptr;
  enc_net_connector_t* send_conn = nullptr;  // index words of the op
  enc_net_connector_t* recv_conn = nullptr;
  enc_channel_prefix_t* chan = nullptr;
  volatile uint32_t* sem[4] = {};  // send hs, send cmp, recv hs, recv cmp
  volatile uint32_t* trigger = nullptr;
};

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
  bool rd = false;                                      // ... by recursive doubling (rd.cc)
  std::vector<PeerItem> sends, recvs;                   // in the order every rank agrees on
  uint64_t copy_src = 0, copy_dst = 0, copy_elems = 0;  // this rank's own block
  std::vector<NetBlock> peer_block;                     // zero or one
};

// How the engine runs a call (Ccom::algorithm_of): over the ring channels,
// over the kangaRing lanes, by recursive doubling, or as direct exchanges
// with each peer (all-to-all, permute).
enum class Algorithm { Ring, KangaRing, RecursiveDoubling, Peer };
// "ring", "kangaring", "rd", "peer" (nrt_emu_ccom_algorithm's answers).
const char* algorithm_name(Algorithm a);

class Ccom {
 public:
  ~Ccom();
  // The communicator, or why it could not be made: "CAUSE (rank R of N:
  // CONTEXT)"; *why (when given) receives CAUSE and CONTEXT apart.
  static Result<Ccom*> create(const nrt_emu_ccom_config_t& cfg, Why* why = nullptr);

  NRT_STATUS run(const nrt_emu_coll_args_t& a);
  // The algorithm run(a) takes, from a's operation, type and count alone
  // (buffers are not looked at); NRT_INVALID (error()) for arguments run
  // refuses before it looks at buffers.
  NRT_STATUS algorithm(const nrt_emu_coll_args_t& a, Algorithm* out);
  NRT_STATUS barrier();
  NRT_STATUS alloc(size_t bytes, void** out);
  void free(void* p);

  int rank() const { return rank_; }
  int rank_n() const { return n_; }
  int channel_n() const { return static_cast<int>(chans_.size()); }
  const std::string& error() const { return error_; }
  // The innermost cause of the last failure and what the runtime was doing
  // (error() is "CAUSE (CONTEXT)", or CAUSE when context() is "").
  const std::string& cause() const { return cause_; }
  const std::string& context() const { return context_; }

 private:
  Ccom() = default;
  NRT_STATUS fail(NRT_STATUS s, std::string why);
  Status init(const nrt_emu_ccom_config_t& cfg);
  // init's steps, in order.
  Status take_config(const nrt_emu_ccom_config_t& cfg);
  Result<int> place_on_device(const nrt_emu_ccom_config_t& cfg);  // logical cores per device
  Status init_communicator(const nrt_emu_ccom_config_t& cfg, int vcores_per_device);
  Status read_rings(const nccl_comm_info_t& info, int channels);
  Status allocate_memory(const nrt_emu_ccom_config_t& cfg, int channels);
  Status connect_links();
  Status build_channels();
  Status exchange_and_map();
  // exchange_and_map's parts: this rank's card, a peer's checked against
  // it, and the mappings of the DIRECT links.
  PeerCard own_card() const;
  Status check_card(int r, const PeerCard& p, const PeerCard& me) const;
  Status map_direct_links();
  Status net_channel(Channel& c);
  Status build_kanga_lanes(const nccl_comm_info_t& info);
  Status map_direct_send(Channel& c, uint64_t slots, uint64_t head, const std::string& what);
  // The links a plan runs over: the kangaRing lanes or the ring channels.
  std::vector<Channel>& lanes_of(const Plan& p) { return p.kanga ? kanga_ : chans_; }
  // The call's description (operation, type, reduction, count checked),
  // then validate's checks of root, peers and buffers on top.
  Status describe(const nrt_emu_coll_args_t& a, CollDesc* d) const;
  Status validate(const nrt_emu_coll_args_t& a, CollDesc* d) const;
  Algorithm algorithm_of(const CollDesc& d) const;
  Result<Plan*> plan_for(const nrt_emu_coll_args_t& a, const CollDesc& d);
  Status build_plan(Plan& p);
  Status execute(Plan& p);
  // execute's parts: the proxy task of the plan's NET blocks; one channel (or
  // lane) moved as far as its slots allow; what the device waits for, for a
  // timeout's message.
  struct Advance {
    bool moved = false;  // a slice, descriptor or closing word went out
    bool done = false;   // every step ran and every NET side is closed
  };
  Status submit_network(const Plan& p, NetTask& task);
  void idle_pass(NetTask& task, bool helped, bell::Idle& idle, uint32_t seen);
  Result<Advance> advance(const Plan& p, size_t ci, Run& r, const SliceStamp& stamp);
  // advance's parts for one step: its slots, the received payload, the
  // step's data movement, and the hand-over to the peers.
  bool step_slots(Channel& c, const Step& s, const Run& r, const uint8_t*& rslot,
                  uint8_t*& sslot) const;
  Result<const uint8_t*> received_payload(const Plan& p, size_t ci, const Channel& c,
                                          const uint8_t* rslot, size_t bytes,
                                          const SliceStamp& stamp);
  Status run_step(const Plan& p, size_t ci, Channel& c, const Step& s, Run& r, const uint8_t* rslot,
                  uint8_t* sslot, const SliceStamp& stamp);
  void hand_over(Channel& c, const Step& s, Run& r, uint8_t* sstart, SliceStamp st);
  std::string waiting_for(const Plan& p, const std::vector<Run>& runs);
  std::string describe_peer(int rank) const;
  // "" when the slice at `slot` carries `mine`; otherwise the mismatch,
  // naming where it arrived (`link` and `index`: "channel", 2; `index` < 0
  // for none), the peer and both calls. On every received slice: it builds
  // no text unless the stamps differ.
  Status check_stamp(const uint8_t* slot, const SliceStamp& mine, const char* link, int index,
                     int peer) const;
  Status setup_peer_links(uint32_t connectivity, const std::vector<int>& peers);
  Status link_peer(int rank);
  Status setup_net_peer_ring();
  Status map_peer(int rank);
  // The payload of a slice rank `peer` passed by reference (at `slot`, after
  // the stamp), checked against the `bytes` expected.
  Result<const uint8_t*> referenced_payload(int peer, const uint8_t* slot, uint64_t bytes);
  Status build_peer_plan(Plan& p);
  Status build_peer_block(Plan& p);
  // All-reduce and all-gather by recursive doubling over the RDH peers
  // (rd.cc): whether a call runs it, and its plan.
  bool runs_recursive_doubling(const CollDesc& d) const;
  Status build_rd_plan(Plan& p);
  Status build_rd_gather_plan(Plan& p);
  Status start_rd_plan(Plan& p, int p2);
  Status execute_peers(Plan& p);
  // execute_peers' parts: the slices sent and received as far as the slots
  // allow (true if anything moved).
  bool send_peer_slices(const Plan& p, PeerRun& r, const SliceStamp& stamp);
  Result<bool> receive_peer_slices(const Plan& p, PeerRun& r, const SliceStamp& stamp);
  std::string peer_gone() const;
  // peer_gone over a few peers per call, in turn (the idle watch's check).
  std::string some_peer_gone() const;
  // One watch per rank: of the ranks whose process is another process of
  // this machine (threads of this process cannot die alone, other machines'
  // processes are not ours to see); the others watch nothing.
  void watch_peers();

  const nccom_export_table_t* t_ = nullptr;
  void* comm_ = nullptr;
  int rank_ = 0, n_ = 1, host_ = 0, local_ = 0;
  uint32_t timeout_ms_ = 60000;
  uint64_t slot_bytes_ = 0;
  // Recursive doubling up to these sizes (capped to one slice):
  uint64_t rd_max_bytes_ = 0;               // NEURON_RT_EMU_ALLREDUCE_RD_BYTES
  uint64_t rd_gather_max_bytes_ = 0;        // NEURON_RT_EMU_ALLGATHER_RD_BYTES (of output)
  uint64_t rd_executions_ = 0;              // executions run by it (logged at close)
  nrt_emu_devmem_t* engine_mem_ = nullptr;  // slots, counters, semaphores, connectors
  nrt_emu_devmem_t* user_mem_ = nullptr;    // nrt_emu_ccom_alloc
  Heap heap_;
  std::vector<PeerCard> cards_;
  std::vector<ProcessWatch> watches_;  // by rank (watch_peers)
  mutable size_t gone_cursor_ = 0;     // some_peer_gone's next rank
  struct Mapping {
    void* base = nullptr;
    size_t bytes = 0;
  };
  std::vector<Mapping> peer_maps_;  // by rank; mapped only for DIRECT neighbours
  // This rank's doorbell (in its engine memory), and its same-host peers'
  // (by rank, in their mapped memory; nullptr where not mapped): rung after
  // every store to a word the other side's device loop waits on.
  bell::Bell* bell_ = nullptr;
  uint32_t spin_us_ = bell::kDefaultSpinUs;  // NEURON_RT_EMU_SPIN_US
  uint32_t poll_ns_ = bell::kDefaultPollNs;  // NEURON_RT_EMU_POLL_NS
  // NEURON_RT_EMU_PROXY_HELP: while its network task runs, the device loop
  // steps the proxy itself (nrt_emu_proxy_help) instead of waiting for the
  // worker thread.
  bool proxy_help_ = true;
  std::vector<bell::Bell*> peer_bells_;
  // Peers' device memory (by rank), mapped at the first slice one passes by
  // reference.
  std::vector<Mapping> peer_user_maps_;
  bool by_reference_ = true;  // NEURON_RT_EMU_DIRECT_READ
  uint64_t by_reference_slices_ = 0;
  std::vector<Channel> chans_;
  // kangaRing lanes: lane k runs over kangaring path k (in its given
  // rotation) with its own DIRECT links, never sharing counters with the
  // ring channels. Empty unless libnccom built paths and all ranks share
  // one host.
  std::vector<Channel> kanga_;
  uint32_t kanga_sum_ = 0;
  uint64_t kanga_executions_ = 0;
  uint64_t kanga_lane_steps_[kMaxEngineChannels] =
      {};        // slice steps each lane ran (logged at close)
  int dev_ = 0;  // nec_dev_id this rank runs on
  PeerLinks links_;
  int local_n_ = 1;
  uint8_t* pair_area_ = nullptr;  // this rank's receive rings for same-host senders
  uint64_t pair_stride_ = 0;
  nrt_emu_proxy_t* proxy_ = nullptr;
  std::list<Plan> plans_;  // most recently used first
  std::string error_;
  std::string cause_;    // error_'s innermost cause
  std::string context_;  // and the rest of it
  uint64_t executions_ = 0;
  bool broken_ = false;  // a failed init or execution: the links are in an unknown state
  std::string broken_reason_;
};

}  // namespace nrt_emu::engine
