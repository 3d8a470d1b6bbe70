// links.h — what travels between the ranks of the engine and the links it
// travels over: the slice stamp, the engine card every rank publishes, and
// the ring channels' receive and send links.
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

#include "../knobs.h"
#include "program.h"

#include <nrt_emu.h>

#include <cstdint>
#include <iterator>
#include <string>

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

}  // namespace nrt_emu::engine
