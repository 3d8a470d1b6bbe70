// peer_executor.h — the peer links (all-to-all, permute, recursive
// doubling): one link to every other rank this rank exchanges with.
#pragma once

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

}  // namespace nrt_emu::engine
