// The emulated hosts checked against libnccom's topology (shape_check.h).
#include "shape_check.h"

#include "core/context.h"
#include "graphbuild/comm_graph.h"
#include "graphbuild/node_topology.h"
#include "log/log.h"
#include "topo_tool.h"

#include <nrt_emu.h>

#include <map>

namespace nccom::nccomtest {

std::optional<ShapeRefusal> refuse_host_shapes(const std::vector<int>& ranks_per_host,
                                               DeviceCount count,
                                               const std::filesystem::path& tool_dir) {
  // This process's own copy of the host's logger stays silent: what could
  // go wrong here (a plugin that does not load, a bad setting) the ranks'
  // libnccom says itself.
  log::Settings quiet;
  quiet.level = log::Level::None;
  quiet.stream = log::Stream::Stderr;
  (void)log::configure(quiet);
  struct Restore {
    ~Restore() { log::reset(); }
  } restore;

  auto context = topotool::load_context(tool_dir, {});
  if (!context) return std::nullopt;
  auto backends = graphbuild::load_topology_backends(**context);
  if (!backends || backends->empty()) return std::nullopt;
  auto settings = graphbuild::graph_settings((*context)->config(), false);
  if (!settings) return std::nullopt;
  const int pod = nrt_emu_platform_pod_type();
  if (pod < 0) return std::nullopt;
  enc_neuron_device_info_t device{};
  device.pod_type = static_cast<nec_pod_type_t>(pod);
  auto machine = graphbuild::runtime_machine(device);
  if (!machine) return std::nullopt;

  std::map<int, std::string> answered;  // device count: "" or why not
  for (size_t h = 0; h < ranks_per_host.size(); ++h) {
    const int n = ranks_per_host[h];
    const int devices = count == DeviceCount::OnePerRank ? n : nrt_emu_host_device_count(n);
    if (devices < 1) return std::nullopt;
    auto [it, fresh] = answered.try_emplace(devices);
    if (fresh) {
      nccom_topo_machine_t m = *machine;
      m.device_count = devices;
      auto chosen = graphbuild::choose_system_backend(*backends, m, *settings);
      if (!chosen) it->second = chosen.error().message;
    }
    if (!it->second.empty()) return ShapeRefusal{static_cast<int>(h), n, devices, it->second};
  }
  return std::nullopt;
}

std::string refusal_text(const ShapeRefusal& r, const std::string& shape) {
  // The plugins' own reasons first; the communicator's heading after them.
  std::string reasons = r.why;
  const std::string heading = "no topology plugin describes this machine (";
  if (reasons.rfind(heading, 0) == 0) {
    if (const size_t end = reasons.find("): "); end != std::string::npos) reasons.erase(0, end + 3);
  }
  return shape + " puts " + std::to_string(r.ranks) + (r.ranks == 1 ? " rank" : " ranks") +
         " on emulated host " + std::to_string(r.host) + ": " + reasons +
         " (no topology plugin describes a host of " + std::to_string(r.devices) +
         (r.devices == 1 ? " device" : " devices") +
         ": choose -r and -N so that every host has a device count one describes)";
}

}  // namespace nccom::nccomtest
