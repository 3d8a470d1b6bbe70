// What topo_neuron tells a tool that has no runtime to ask (the
// list_platforms and describe_node slots of nccom/topo_plugin.h): its
// platform table with the machine a runtime reports for each row, and its
// model of one machine's node (devices, NICs, device links), as XML text.
#pragma once

#include "platform.h"

#include <nccom/topo_plugin.h>
#include <nccom/util/result.h>

#include <string>

namespace nccom::topo_neuron {

// The machine a runtime reports for a row of the table: the row's first
// instance family (Trn3 for both Trn3 rows), arch_name as the runtime spells
// it, the generation as device revision, the pod type and size of the row.
nccom_topo_machine_t machineOf(Variant v, int devices, int lnc);

// <platforms><platform .../>...</platforms>, one element per table row.
Result<std::string> platformsXml();

// <node ...><device/>...<nic/>...<link/>...</node> for `m` (describeMachine's
// rules: a device count or LNC the platform lacks is the error naming the
// allowed values).
Result<std::string> nodeXml(const nccom_topo_machine_t& m);

}  // namespace nccom::topo_neuron
