// Whether libnccom's topology describes every emulated host of a run,
// asked before any rank starts (docs/tools/nccom-test.md, "Launch modes").
#pragma once

#include "graphbuild/node_topology.h"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace nccom::nccomtest {

// The first emulated host libnccom's topology refuses.
struct ShapeRefusal {
  int host = 0;                                // its index
  int ranks = 0;                               // the ranks on it
  int devices = 0;                             // the device count its ranks' runtime reports
  std::string why;                             // what neuronBuildGraphComm would say
  std::vector<graphbuild::Declined> declined;  // each topology plugin's name and reason
};

// How the ranks' runtime will count a host's devices.
enum class DeviceCount {
  OnePerRank,  // a local launch: NEURON_RT_EMU_DEVICES is the host's rank count
  Runtime,     // under a launcher: as the runtime places a rank (nrt_emu_host_device_count)
};

// The question neuronBuildGraphComm asks, for each emulated host of a run
// (`ranks_per_host[h]`: the ranks on host h): the configuration as libnccom
// loads it and the topology plugins it names (nccom-topo's load_context,
// graphbuild::load_topology_backends), the machine the reference runtime
// reports for that host (graphbuild::runtime_machine, the device count as
// `count` says), and whether a plugin describes it
// (graphbuild::choose_system_backend). nullopt when every host is
// described, and when the question cannot be asked here (the configuration
// does not load, no topology plugin loads, the runtime cannot name its
// platform): the ranks report that themselves. `tool_dir` is nccom-test's
// bin/ (libnccom's plugins are in ../lib/nccom).
std::optional<ShapeRefusal> refuse_host_shapes(const std::vector<int>& ranks_per_host,
                                               DeviceCount count,
                                               const std::filesystem::path& tool_dir);

// The one line nccom-test prints for a refusal, the plugins' reasons
// first: "-r 10 -N 2 puts 5 ranks on emulated host 0: neuron: topo_neuron:
// platform emu has no instance with 5 devices (it has 1, 2, 3, 4, 8, 16);
// nccl: ... (no topology plugin describes a host of 5 devices: choose -r
// and -N ...)". `shape` names how the ranks were placed ("-r 10 -N 2").
std::string refusal_text(const ShapeRefusal& r, const std::string& shape);

}  // namespace nccom::nccomtest
