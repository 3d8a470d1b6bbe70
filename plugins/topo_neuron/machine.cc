#include "machine.h"

#include "fail.h"

#include <nccom/topo/graph.h>

#include <cstring>
#include <string>

namespace nccom::topo_neuron {
namespace {

std::string archName(const nccom_topo_machine_t& m) {
  return std::string(m.arch_name, strnlen(m.arch_name, sizeof m.arch_name));
}

}  // namespace

Result<Variant> machineVariant(const nccom_topo_machine_t& m) {
  if (m.struct_size < sizeof(nccom_topo_machine_t))
    return fail(NRT_INVALID, "topo_neuron: nccom_topo_machine_t struct_size " +
                                 std::to_string(m.struct_size) + " is smaller than " +
                                 std::to_string(sizeof(nccom_topo_machine_t)));
  if (archName(m) == "emu") return Variant::Emu;
  if (m.pod_type < kPodTypeNone || m.pod_type > kPodTypeSwitch)
    return fail(NRT_INVALID, "topo_neuron: pod_type " + std::to_string(m.pod_type) +
                                 " is not 0 (none), 1 (P2P) or 2 (SWITCH)");
  return variantFromInstance(m.instance_family, m.pod_type == kPodTypeSwitch);
}

Result<PlatformDescription> describeMachine(const nccom_topo_machine_t& m) {
  auto v = machineVariant(m);
  if (!v) return v.take_error();
  if (m.device_count <= 0)
    return fail(NRT_INVALID, "topo_neuron: platform " + std::string(platformSpec(*v).name) +
                                 ": the runtime reports " + std::to_string(m.device_count) +
                                 " Neuron devices");
  DescribeOptions o;
  o.instanceDevices = m.device_count;
  o.lnc = m.vcore_size > 0 ? m.vcore_size : -1;
  return describePlatform(*v, o);
}

Result<NodeShare> shareFromNode(const nccom_topo_node_t& n) {
  if (n.struct_size < sizeof(nccom_topo_node_t))
    return fail(NRT_INVALID, "topo_neuron: nccom_topo_node_t struct_size " +
                                 std::to_string(n.struct_size) + " is smaller than " +
                                 std::to_string(sizeof(nccom_topo_node_t)));
  if (n.n_local < 1 || n.n_local > topo::kMaxLocalRanks)
    return fail(NRT_INVALID, "topo_neuron: n_local " + std::to_string(n.n_local) +
                                 " is outside [1, " + std::to_string(topo::kMaxLocalRanks) + "]");
  if (n.local_ranks == nullptr || n.local_devices == nullptr || n.local_cores == nullptr)
    return fail(NRT_INVALID,
                "topo_neuron: local_ranks, local_devices and local_cores must all be set");
  NodeShare s;
  s.nRanks = n.n_ranks;
  s.nNodes = n.n_nodes;
  s.node = n.node;
  s.ranks.assign(n.local_ranks, n.local_ranks + n.n_local);
  s.devices.assign(n.local_devices, n.local_devices + n.n_local);
  s.cores.assign(n.local_cores, n.local_cores + n.n_local);
  return s;
}

}  // namespace nccom::topo_neuron
