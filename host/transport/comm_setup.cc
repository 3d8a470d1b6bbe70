#include "transport/comm_setup.h"

#include "core/context.h"
#include "core/runtime.h"
#include "log/log.h"
#include "net/plugin_answers.h"
#include "net/selection.h"
#include "transport/net_facade.h"
#include "transport/preferred_nic.h"

#include <mutex>
#include <sstream>

namespace nccom::transport {
namespace {

struct Backends {
  Status loaded;  // an invalid plugin configuration, for every caller
  std::vector<TransportBackend> list;
};

const Backends& backends(core::Context& ctx) {
  static std::once_flag once;
  static Backends b;
  std::call_once(once, [&ctx] {
    std::vector<std::string> names;
    std::stringstream text(ctx.config().get_string("transport.plugins"));
    for (std::string name; std::getline(text, name, ',');) {
      if (!name.empty()) names.push_back(name);
    }
    if (auto n = ctx.load_plugins(NCCOM_PLUGIN_KIND_TRANSPORT, names); !n) {
      b.loaded = n.take_error();
      return;
    }
    for (plugin::LoadedPlugin* p : ctx.plugins(NCCOM_PLUGIN_KIND_TRANSPORT)) {
      auto bound = TransportBackend::bind(*p);
      if (bound) {
        b.list.push_back(*bound);
      } else {
        NCCOM_WARN("skipping transport plugin: %s", bound.error().message.c_str());
      }
    }
  });
  return b;
}

// Trn2 and Trn3 families confirm receives with a 4-byte RDMA read
// (the original's requestTracker.sidelink_present).
bool sidelink_platform() {
  nrt_instance_info_t info{};
  if (runtime::api().nrt_get_instance_info(&info, sizeof info) != NRT_SUCCESS) return false;
  switch (info.family) {
    case 5:
    case 6:
    case 8:
    case 9:   // TRN2, TRN2N, TRN2P, TRN2U
    case 10:  // TRN3
      return true;
    default: return false;
  }
}

}  // namespace

Status build_comm_transports(comm::Communicator& comm) {
  const auto& g = comm.graph();
  if (!g) return make_error(NRT_FAILURE, "the communicator has no graph to connect");
  auto ctx = core::Context::get();
  if (!ctx) return ctx.take_error();
  const config::Config& cfg = (*ctx)->config();
  const Backends& b = backends(**ctx);
  if (!b.loaded) return b.loaded.error();
  std::vector<const TransportBackend*> list;
  for (const TransportBackend& t : b.list) list.push_back(&t);
  if (list.empty() && comm.nranks() > 1) {
    return make_error(NRT_FAILURE, "no transport plugin is loaded (transport.plugins = \"" +
                                       cfg.get_string("transport.plugins") +
                                       "\"; see the WARN lines above)");
  }

  NetForTransports net;
  NicTable nics;
  if (comm.nranks() > 1) {
    auto selected = net::select();
    if (!selected) return selected.take_error();
    net::Net& n = **selected;
    net.with_ctx = net_with_ctx(n);
    net.name = net.with_ctx.name != nullptr ? net.with_ctx.name : "net";
    net.origin = net_origin(n);
    // Asked again (the plugin may have lost a device since its selection),
    // with the same bound: the NIC table below has one entry per device.
    auto devices = net::device_count(n);
    if (!devices) return devices.take_error();
    net.devices = *devices;
    net.sidelink = sidelink_platform();
    for (int d = 0; d < *devices; ++d) {
      ncclNetProperties_v6_t props{};
      if (net.with_ctx.get_properties(net.with_ctx.ctx, d, &props) != ncclSuccess) continue;
      nics.nics.push_back(NetDevice{d, net::bounded_text(props.name, net::kMaxNetNameBytes),
                                    net::bounded_text(props.pciPath, net::kMaxNetPathBytes)});
    }
  }
  // What neuronPreferredNcRidNic answers from: this host's devices (as
  // neuronGetCommInfo reports them: neuron_dev, rid = MLA index) and the NICs.
  for (const auto& r : comm.peers()) {
    if (r.host_hash != comm.peers()[comm.rank()].host_hash) continue;
    nics.devices.push_back(
        LocalDevice{static_cast<uint32_t>(r.device), static_cast<uint32_t>(r.mla_idx), r.bus_id});
  }
  publish_nic_table(nics);

  TransportSettings settings;
  settings.connect_timeout = std::chrono::milliseconds(cfg.get_int("transport.connect_timeout_ms"));
  // The health service watches the streams for stalls (none when it is off).
  settings.scheduler.watcher = comm.health();
  auto policy =
      P2pPolicy::from_text(cfg.get_string("graph.p2p_disable"), cfg.get_string("graph.p2p_level"));
  if (!policy) return policy.take_error();
  settings.p2p = *policy;
  auto t = CommTransports::connect(comm, *g, std::move(list), net, settings);
  if (!t) return t.take_error();
  comm.set_transports(std::move(*t));
  return {};
}

Result<CommTransports*> transports_of(comm::Communicator& comm, const char* export_name) {
  auto* t = dynamic_cast<CommTransports*>(comm.transports());
  if (t == nullptr) {
    return make_error(NRT_INVALID, std::string(export_name) +
                                       ": the communicator has no transports yet; call "
                                       "neuronBuildGraphComm first");
  }
  return t;
}

}  // namespace nccom::transport
