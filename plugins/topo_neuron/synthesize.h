// XML synthesis (what the original's neuronTopoGetXml does per platform): a
// PlatformDescription plus this node's share of the communicator -> NCCL
// topology XML (<system>) built through sdk/topo's DOM, so sdk/topo's
// buildSystem() reads it back.
//
// Shape (every number is a decision in docs/decisions/topo-neuron.md, "XML
// synthesis"):
//   <system version="1">
//     <cpu numaid=N arch vendor familyid modelid>       one per NUMA node used
//       <pci busid=SWITCH class="0x060400" ...>          one per PCIe switch used
//         <pci busid=VCORE class="0x030000" ...>         one per used vcore
//           <gpu dev=VCOREID rank=GLOBALRANK sm=TAG gdr="1">
//             <nvlink target=PEERBUSID count=C tclass="0x030000"/>  per platform link
//         <pci busid=NIC class="0x020000" ...><nic><net dev=K speed ...></nic></pci>
#pragma once

#include "platform.h"

#include <nccom/topo/system.h>
#include <nccom/topo/xml.h>
#include <nccom/util/result.h>

#include <string>
#include <vector>

namespace nccom::topo_neuron {

// This node's share of the communicator (nccom_topo_node_t as plain values).
// Local rank i is global rank ranks[i] on vcore devices[i] * vcoresPerDevice
// + cores[i].
struct NodeShare {
  int nRanks = 0;
  int nNodes = 1;
  int node = 0;
  std::vector<int> ranks;
  std::vector<int> devices;
  std::vector<int> cores;
};

// A share holding every vcore of the first `nDevices` devices, ranks
// firstRank, firstRank + 1, ... in vcore order.
NodeShare fullShare(const PlatformDescription& d, int nDevices, int firstRank = 0, int nRanks = -1,
                    int nNodes = 1, int node = 0);

// The `sm` attribute: a generation tag, not an SM version.
// 1 = EMU, 2 = SUNDA (NeuronCore-v2), 3 = CAYMAN (v3), 4 = MARIANA (v4).
int smTag(Platform p);
// GB/s of one <nvlink> count unit for a tag (0 for an unknown tag).
float linkWidthForSm(int sm);
// What a reader of our XML passes to topo::buildSystem.
topo::SystemOptions systemOptions(const PlatformDescription& d);
// <nvlink count> for a hop of this locality; `sameDevice` picks the
// intra-device table.
int linkCount(EdgeLocality locality, bool sameDevice);

// Bus ids: PCIe switch s, vcore j of device d, NIC k.
std::string switchBusId(int s);
std::string vcoreBusId(int device, int core);
std::string nicBusId(int nic);

// Checks the share against the description: sizes match, ranks distinct and
// inside [0, nRanks), node inside [0, nNodes), every device present
// (verifyTopology check 1, unless disabled), the local device count allowed
// (check 2, unless disabled), ranks fit the vcores, every core inside its
// device, no vcore twice. Returns the vcore of each local rank.
Result<std::vector<int>> shareVcores(const PlatformDescription& d, const NodeShare& share,
                                     bool disableVerify);

// The <system> document for this node.
Result<topo::XmlDocument> synthesizeSystem(const PlatformDescription& d, const NodeShare& share,
                                           bool disableVerify);
// Same, as text in NCCL's dump layout.
Result<std::string> synthesizeSystemXml(const PlatformDescription& d, const NodeShare& share,
                                        bool disableVerify);

}  // namespace nccom::topo_neuron
