// peer_executor.h — the peer links (all-to-all, permute, recursive
// doubling), one to every other rank this rank exchanges with, and the
// executor that runs peer plans over them.
#pragma once

#include "device_loop.h"
#include "links.h"
#include "plan.h"
#include "rank_context.h"
#include "status.h"

#include <nrt_emu.h>

#include <cstdint>
#include <vector>

namespace nrt_emu::engine {

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

struct PeerRun;  // the peer links' progress through one execution (peer_executor.cc)

// PeerExecutor: owns the peer links (set up on the first plan that needs
// them), builds the plans of all-to-all and permute, and runs every peer
// plan, recursive doubling's included.
class PeerExecutor {
 public:
  // `self` is written to: the first NET peer acquires the proxy worker when
  // no ring channel did.
  PeerExecutor(RankContext& self, Links& links, DeviceLoop& loop)
      : self_(self), links_(links), loop_(loop) {}
  PeerExecutor(const PeerExecutor&) = delete;
  PeerExecutor& operator=(const PeerExecutor&) = delete;
  ~PeerExecutor();

  // Collective (the first plan of every rank that needs them): libnccom's
  // connectivity (MESH: every other rank; RDH: the recursive doubling
  // partners), then a DIRECT or NET link to each of `peers` not linked yet.
  Status link_peers(uint32_t connectivity, const std::vector<int>& peers);
  // An all-to-all or permute plan: its transfers, then build_block.
  Status build_plan(Plan& p);
  // The proxy's basic block of a peer plan: its NET sends and receives, in
  // the plan's order, over the shared ring (none when every peer is DIRECT).
  Status build_block(Plan& p);
  // One execution of peer plan p, numbered `execution`.
  Status execute(Plan& p, uint64_t execution);

 private:
  Status link_peer(int rank);
  Status setup_net_ring();
  // execute's parts: the slices sent and received as far as the slots allow
  // (true if anything moved).
  bool send_slices(const Plan& p, PeerRun& r, const SliceStamp& stamp);
  Result<bool> receive_slices(const Plan& p, PeerRun& r, const SliceStamp& stamp);

  RankContext& self_;
  Links& links_;  // the peers' cards, mapped memory and doorbells; the stamps
  DeviceLoop& loop_;
  PeerLinks peer_links_;
};

}  // namespace nrt_emu::engine
