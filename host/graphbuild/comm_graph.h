// neuronBuildGraphComm for a live communicator: the topology plugins the
// configuration names (loaded once per process), the machine as the runtime
// describes it, this node's share of the communicator, then
// build_node_topology and build_rank_graph over the communicator's
// bootstrap all-gather.
#pragma once

#include "comm/communicator.h"
#include "config/config.h"
#include "core/context.h"
#include "graphbuild/node_topology.h"
#include "rings/summary.h"

#include <nccom/topo_plugin.h>
#include <nccom/util/result.h>

namespace nccom::graphbuild {

// The machine from nrt_get_instance_info, nec_get_device_count and
// nec_get_virtual_core_size, and the pod type of this rank's device info.
Result<nccom_topo_machine_t> runtime_machine(const enc_neuron_device_info_t& device);

// The topology plugins of topology.plugins, loaded into `ctx` (each with its
// [plugins.<name>] knobs, as Context::load_plugins hands them) and bound, in
// the order they are asked. A plugin that does not load or bind is a WARN
// and skipped, as a communicator goes on without it; `skipped` (when given)
// receives one line per such plugin, naming it and why. A plugin whose knob
// settings are invalid is the error. neuronBuildGraphComm does this once per
// process; nccom-topo once per run.
Result<std::vector<TopoBackend>> load_topology_backends(
    core::Context& ctx, std::vector<std::string>* skipped = nullptr);

// The graph settings of a configuration (topology.*, graph.*).
Result<GraphSettings> graph_settings(const config::Config& config, bool is_rank0);

// `net_plugin` describes the process's net plugin ("" when there is none):
// the ranks first check that they agree on it and on the settings
// agreement.h lists, in one all-gather.
Result<rings::GraphSummary> build_comm_graph(comm::Communicator& comm,
                                             const std::string& net_plugin);

}  // namespace nccom::graphbuild
