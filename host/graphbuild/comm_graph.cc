#include "graphbuild/comm_graph.h"

#include "core/context.h"
#include "core/runtime.h"
#include "graphbuild/agreement.h"
#include "graphbuild/rank_graph.h"
#include "log/log.h"

#include <nccom/topo/paths.h>

#include <cstring>
#include <mutex>
#include <sstream>
#include <vector>

namespace nccom::graphbuild {
namespace {

// The topology backends of this process, bound once.
struct Backends {
  Status loaded;  // an invalid plugin configuration, for every caller
  std::vector<TopoBackend> list;
};

const Backends& backends(core::Context& ctx) {
  static std::once_flag once;
  static Backends b;
  std::call_once(once, [&ctx] {
    auto list = load_topology_backends(ctx);
    if (list)
      b.list = std::move(*list);
    else
      b.loaded = list.take_error();
  });
  return b;
}

std::optional<std::string_view> unless_empty(const std::string& s) {
  if (s.empty()) return std::nullopt;
  return std::string_view(s);
}

}  // namespace

Result<std::vector<TopoBackend>> load_topology_backends(core::Context& ctx,
                                                        std::vector<std::string>* skipped) {
  std::vector<std::string> names;
  std::stringstream text(ctx.config().get_string("topology.plugins"));
  for (std::string name; std::getline(text, name, ',');) {
    if (!name.empty()) names.push_back(name);
  }
  std::vector<plugin::LoadError> not_loaded;
  if (auto n = ctx.load_plugins(NCCOM_PLUGIN_KIND_TOPOLOGY, names, &not_loaded); !n) {
    return n.take_error();
  }
  if (skipped != nullptr) {
    for (const plugin::LoadError& e : not_loaded) skipped->push_back(e.message);
  }
  std::vector<TopoBackend> list;
  for (plugin::LoadedPlugin* p : ctx.plugins(NCCOM_PLUGIN_KIND_TOPOLOGY)) {
    auto bound = TopoBackend::bind(*p);
    if (bound) {
      list.push_back(*bound);
    } else {
      NCCOM_WARN("skipping topology plugin: %s", bound.error().message.c_str());
      if (skipped != nullptr) skipped->push_back(bound.error().message);
    }
  }
  return list;
}

Result<nccom_topo_machine_t> runtime_machine(const enc_neuron_device_info_t& device) {
  const runtime::Api& rt = runtime::api();
  nccom_topo_machine_t m{};
  m.struct_size = sizeof m;
  nrt_instance_info_t info{};
  if (NRT_STATUS s = rt.nrt_get_instance_info(&info, sizeof info); s != NRT_SUCCESS) {
    return make_error(s, "nrt_get_instance_info failed (" + std::to_string(s) +
                             "): the runtime cannot say which platform this is");
  }
  m.instance_family = info.family;
  m.instance_size = info.size;
  std::memcpy(m.arch_name, info.arch_name, sizeof m.arch_name - 1);
  std::memcpy(m.device_revision, info.device_revision, sizeof m.device_revision - 1);
  const int devices = rt.nec_get_device_count(nullptr, 0);
  if (devices < 1) {
    return make_error(NRT_FAILURE, "nec_get_device_count returned " + std::to_string(devices) +
                                       ": the runtime reports no Neuron device");
  }
  m.device_count = devices;
  uint32_t vcore = 0;
  if (NRT_STATUS s = rt.nec_get_virtual_core_size(&vcore); s != NRT_SUCCESS || vcore == 0) {
    return make_error(NRT_FAILURE, "nec_get_virtual_core_size failed (" + std::to_string(s) + ")");
  }
  m.vcore_size = static_cast<int32_t>(vcore);
  m.pod_type = static_cast<int32_t>(device.pod_type);
  m.pod_size = 1;
  return m;
}

Result<GraphSettings> graph_settings(const config::Config& config, bool is_rank0) {
  GraphSettings s;
  s.topo_file_set = !config.get_string("topology.file").empty();
  s.topo_dump_file = config.get_string("topology.dump_file");
  s.dump = is_rank0;
  s.graph_file = config.get_string("graph.file");
  s.new_algorithm = static_cast<int>(config.get_int("graph.use_new_algorithm"));
  if (const config::Entry& knob = config.entry("graph.use_new_algorithm");
      s.new_algorithm != -1 && knob.source.kind != config::Source::Kind::Default) {
    NCCOM_INFO(log::kGraph | log::kEnv, "NCCL_GRAPH_USE_NEW_ALGORITHM set by %s to %d",
               knob.source.set_by("NCCL_GRAPH_USE_NEW_ALGORITHM").c_str(), s.new_algorithm);
  }
  const std::string level = config.get_string("graph.p2p_level");
  const std::string disable = config.get_string("graph.p2p_disable");
  auto resolved = topo::resolveP2pLevel(unless_empty(disable), unless_empty(level));
  if (!resolved) return resolved.take_error();
  s.paths.p2pLevel = *resolved;
  return s;
}

Result<rings::GraphSummary> build_comm_graph(comm::Communicator& comm,
                                             const std::string& net_plugin) {
  auto ctx = core::Context::get();
  if (!ctx) return ctx.take_error();
  const AllGather gather = [&comm](void* data, std::size_t per_rank) {
    return comm.all_gather(data, per_rank);
  };
  if (Status agreed =
          check_agreement(comm.rank(), comm.nranks(),
                          settings_that_must_agree((*ctx)->config(), net_plugin), gather);
      !agreed) {
    return agreed.take_error();
  }
  const Backends& b = backends(**ctx);
  if (!b.loaded) return b.loaded.error();

  auto machine = runtime_machine(comm.device_info());
  if (!machine) return machine.take_error();
  auto settings = graph_settings((*ctx)->config(), comm.rank() == 0);
  if (!settings) return settings.take_error();

  std::vector<RankIdentity> ids;
  for (const auto& p : comm.peers()) {
    ids.push_back(RankIdentity{p.host_hash, p.device, p.mla_idx, p.pod_node_id});
  }
  const ClusterLayout layout = make_layout(ids);
  const NodeShare share(layout, layout.rank_node[comm.rank()]);

  auto topology = build_node_topology(b.list, *machine, share.view, *settings);
  if (!topology) return topology.take_error();
  NCCOM_INFO(log::kGraph | log::kInit, "topology from plugin %s, %d channel(s) from %s",
             topology->backend.c_str(), topology->graph.nChannels, topology->graph_origin.c_str());

  RankGraphInput in;
  in.my_rank = comm.rank();
  in.layout = &layout;
  in.graph = &topology->graph;
  in.switch_v1 = is_switch_v1(*machine);
  if (in.switch_v1) in.kanga_paths = topology->kanga_paths;
  auto order = node_order(b.list, topology->backend, *machine, layout);
  if (!order) return order.take_error();
  in.node_order = std::move(*order);
  return build_rank_graph(in, gather);
}

}  // namespace nccom::graphbuild
