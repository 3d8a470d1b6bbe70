// links.h — what travels between the ranks of the engine and the links it
// travels over: the slice stamp, the engine card every rank publishes, the
// ring channels' receive and send links, and Links, which owns them.
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
#include "program.h"
#include "rank_context.h"
#include "status.h"

#include <nrt_emu.h>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

namespace nrt_emu::engine {

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

// Links: this rank's ring channels and kangaRing lanes with the device
// words they use (slots, heads, doorbell, the peer rings' area), and its
// view of the peers: their cards, their mapped memory, their doorbells.
class Links {
 public:
  // `cards` holds every rank's card once Ccom's all-gather is done.
  Links(const RankContext& self, const std::vector<PeerCard>& cards) : self_(self), cards_(cards) {}
  Links(const Links&) = delete;
  Links& operator=(const Links&) = delete;
  ~Links();

  // Bring-up, in order: the rings libnccom built, the lanes of its
  // kangaRing paths, the slots and words of both, and (once every card is
  // in) the peers' memory the DIRECT links write to.
  Status read_rings(const nccl_comm_info_t& info, int channels);
  Status build_kanga_lanes(const nccl_comm_info_t& info);
  Status build_channels();
  Status map_direct_links();

  // Rank r's engine memory, mapped once, and its doorbell (nullptr where
  // not mapped).
  Status map_peer(int r);
  uint8_t* peer_memory(int r) const { return static_cast<uint8_t*>(peer_maps_[idx(r)].base); }
  bell::Bell* peer_bell(int r) const { return peer_bells_[idx(r)]; }
  // The payload of a slice rank `peer` passed by reference (at `slot`, after
  // the stamp), checked against the `bytes` expected.
  Result<const uint8_t*> referenced_payload(int peer, const uint8_t* slot, uint64_t bytes);
  // "rank R (host H, pid P on HOSTNAME)".
  std::string describe_peer(int rank) const;
  // "" when the slice at `slot` carries `mine`; otherwise the mismatch,
  // naming where it arrived (`link` and `index`: "channel", 2; `index` < 0
  // for none), the peer and both calls. On every received slice: it builds
  // no text unless the stamps differ.
  Status check_stamp(const uint8_t* slot, const SliceStamp& mine, const char* link, int index,
                     int peer) const;

  const PeerCard& card(int r) const { return cards_[idx(r)]; }
  const std::vector<Channel>& channels() const { return chans_; }
  const std::vector<Channel>& kanga_lanes() const { return kanga_; }
  // The links a plan runs over: the kangaRing lanes or the ring channels.
  std::vector<Channel>& lanes(bool kanga) { return kanga ? kanga_ : chans_; }
  uint32_t kanga_sum() const { return kanga_sum_; }
  bell::Bell* bell() const { return bell_; }
  // This rank's receive rings for same-host senders, one per sender's local
  // rank: kSlots slots, then the head on a page of its own.
  uint8_t* pair_area() const { return pair_area_; }
  uint64_t pair_stride() const { return kSlots * self_.slot_bytes + 4096; }

 private:
  struct Mapping {
    void* base = nullptr;
    size_t bytes = 0;
  };
  static size_t idx(int r) { return static_cast<size_t>(r); }
  Status net_channel(Channel& c);
  Status map_direct_send(Channel& c, uint64_t slots, uint64_t head, const std::string& what);

  const RankContext& self_;
  const std::vector<PeerCard>& cards_;  // by rank
  std::vector<Channel> chans_;
  // kangaRing lanes: lane k runs over kangaring path k (in its given
  // rotation) with its own DIRECT links, never sharing counters with the
  // ring channels. Empty unless libnccom built paths and all ranks share
  // one host.
  std::vector<Channel> kanga_;
  uint32_t kanga_sum_ = 0;  // checksum of the lanes' paths (PeerCard::kanga_sum)
  // This rank's doorbell, in its engine memory: rung after every store to a
  // word this rank's device loop waits on.
  bell::Bell* bell_ = nullptr;
  uint8_t* pair_area_ = nullptr;
  std::vector<Mapping> peer_maps_;  // by rank; mapped only for DIRECT neighbours
  // Same-host peers' doorbells, by rank, in their mapped memory.
  std::vector<bell::Bell*> peer_bells_;
  // Peers' device memory (by rank), mapped at the first slice one passes by
  // reference.
  std::vector<Mapping> peer_user_maps_;
};

}  // namespace nrt_emu::engine
