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

  std::map<int, bool> described;  // device count: does a plugin describe it
  for (size_t h = 0; h < ranks_per_host.size(); ++h) {
    const int n = ranks_per_host[h];
    const int devices = count == DeviceCount::OnePerRank ? n : nrt_emu_host_device_count(n);
    if (devices < 1) return std::nullopt;
    if (described.count(devices) != 0) continue;  // asked already, and described
    nccom_topo_machine_t m = *machine;
    m.device_count = devices;
    ShapeRefusal refusal{static_cast<int>(h), n, devices, "", {}};
    auto chosen = graphbuild::choose_system_backend(*backends, m, *settings, &refusal.declined);
    if (!chosen) {
      refusal.why = chosen.error().message;
      return refusal;
    }
    described[devices] = true;
  }
  return std::nullopt;
}

std::string refusal_text(const ShapeRefusal& r, const std::string& shape) {
  const std::string head = shape + " puts " + std::to_string(r.ranks) +
                           (r.ranks == 1 ? " rank" : " ranks") + " on emulated host " +
                           std::to_string(r.host) + ": ";
  const std::string fix = ": choose other -r and -N";
  if (r.declined.empty()) return head + r.why + fix;
  // The first plugin's own reason (the one asked first, the platform's);
  // the others only by name: their reasons are nccom-topo's to show.
  std::string others;
  for (size_t i = 1; i < r.declined.size(); ++i)
    others += (others.empty() ? "" : ", ") + r.declined[i].backend;
  return head + r.declined[0].backend + ": " + r.declined[0].why +
         (others.empty() ? "" : "; topology plugin " + others + " declines too") + fix;
}

}  // namespace nccom::nccomtest
