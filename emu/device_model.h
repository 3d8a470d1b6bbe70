// The emulated host's devices: how many there are, where they sit on PCI,
// how their MLAs are wired, and the port/rid maps libnccom pushes back.
//
// Today's model (NEURON_RT_EMU_DEVICES devices, default 2, at most 16):
//   * device i has MLA index i and routing id i;
//   * its PCI BDF is 0000:(0x10+i):00.0 — made up, but stable;
//   * the MLAs form one ring: port 0 leads to the next MLA, port 1 to the
//     previous one, every other port to nothing (-1); a single device has no
//     peers;
//   * there are no pods, except on trn3-switch-v1 (platform.h): its node is
//     a NeuronSwitch pod of one node, in which every pair of devices of
//     node 0 can reach each other and nothing else is in the pod.
// The topology work grows this file (per-platform wiring, pods); callers
// only see the functions below.
//
// Error convention of the callbacks built on this model: functions returning
// an index or count answer -1 for bad input, bool ones answer false,
// NRT_STATUS ones answer NRT_INVALID. Nothing here trusts its arguments.
#pragma once

#include <nccom/nrt_abi.h>

#include <cstdint>
#include <vector>

namespace nrt_emu::devices {

inline constexpr int kMaxDevices = 16;
inline constexpr int kMaxMapEntries = 65536;  // bound for nec_build_port_and_rid_map

// NEURON_RT_EMU_DEVICES (or the process default a communicator set), or -1
// (logged) when it is not an integer in 1..16
// or not the platform's only device count (trn3-switch-v1: 16, also the
// default there).
int count();

bool valid_device(int dev);
bool valid_mla(int dev, int mla);

struct Bdf {
  uint32_t domain;
  uint32_t bus;
  uint8_t slot;
  uint8_t function;
};
bool pci_bdf(int dev, Bdf* out);

int rid_of_mla(int dev, int mla);  // -1 when invalid
int mla_of_rid(int dev, int rid);  // -1 when invalid
int peer_mla(int dev, int mla, int port);

// The pod answers (nec_get_p2p_pod_peer_node, nec_pod_node_can_access_peer_node):
// the peer node `port_distance` away, -1 when there is none (no pod, or a
// pod of one node); whether (rid, node) reaches (rid, node) through a pod
// of `pod_type` (false unless it is the platform's pod type and both nodes
// are in the pod). False from the first when the device is invalid.
bool pod_peer_node(int dev, int node, uint32_t port_distance, int* peer_node);
bool pod_can_access(nec_pod_type_t pod_type, uint32_t local_rid, uint32_t local_node,
                    uint32_t remote_rid, uint32_t remote_node);

// The maps libnccom gathered for `dev` (nec_build_port_and_rid_map).
NRT_STATUS record_port_and_rid_map(int dev, const int* mla_indexes, const int* host_device_ids,
                                   int count);
struct PortAndRidMap {
  std::vector<int> mla_indexes;
  std::vector<int> host_device_ids;
};
// False when nothing was recorded for `dev`.
bool recorded_map(int dev, PortAndRidMap* out);

}  // namespace nrt_emu::devices
