// HostDescription -> NCCL topology XML: one <cpu> per NUMA node, the kept PCI
// trees as nested <pci>, a <gpu> for every local rank whose Neuron device was
// found, a <nic> with one <net> per active port where each RDMA device's PCI
// function sits. Decisions: docs/decisions/topo-nccl.md, "Host XML".
#pragma once

#include "host_description.h"
#include "local_share.h"

#include <nccom/topo/xml.h>
#include <nccom/util/result.h>

#include <string>

namespace nccom::topo_nccl {

// The `sm` generation tag of a Neuron generation, as topo_neuron writes it:
// trn1 and inf2 (NeuronCore-v2) 2, trn2 3, trn3 4; 0 for anything else.
int smTagForGeneration(const std::string& generation);

// The bus id of core slot k (0-based) of a device whose several local ranks
// each need their own <pci>: one more leading hex digit (k + 1) in front of
// the domain, "0000:03:00.0" -> "10000:03:00.0", so it never collides with
// a real 4-digit domain. At most 15 slots.
std::string coreBusId(const std::string& deviceBusId, int slot);

// Local rank i becomes <gpu dev=i rank=ranks[i]> on Neuron device
// share.devices[i] (devices are numbered in bus-id order, as detection lists
// them). Ranks whose device was not found get no <gpu>; the caller checks.
Result<topo::XmlDocument> hostToXml(const HostDescription& host, const LocalShare& share);

}  // namespace nccom::topo_nccl
