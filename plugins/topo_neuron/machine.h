// The plugin boundary's structs (sdk nccom/topo_plugin.h) -> the library's
// plain values: which platform row a machine is, its description, and this
// node's share. Every malformed field is an error naming it.
#pragma once

#include "platform.h"
#include "synthesize.h"

#include <nccom/topo_plugin.h>
#include <nccom/util/result.h>

namespace nccom::topo_neuron {

// nccom_topo_machine_t.pod_type values (nccom's own numbering, nccom/topo_plugin.h).
inline constexpr int32_t kPodTypeNone = 0;
inline constexpr int32_t kPodTypeP2p = 1;
inline constexpr int32_t kPodTypeSwitch = 2;

// arch_name "emu" -> Variant::Emu; otherwise variantFromInstance(family,
// pod_type == SWITCH). Unknown families are the error "unknown platform".
Result<Variant> machineVariant(const nccom_topo_machine_t& m);

// The description of `m`: instance devices = device_count, LNC = vcore_size
// (<= 0: the platform default). What probe accepts.
Result<PlatformDescription> describeMachine(const nccom_topo_machine_t& m);

// The node's share; checks struct_size, pointers, n_local in [1, 256].
Result<NodeShare> shareFromNode(const nccom_topo_node_t& n);

}  // namespace nccom::topo_neuron
