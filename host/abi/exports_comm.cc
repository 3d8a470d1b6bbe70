// Communicator and bootstrap exports (export-table slots 1–6, 11–13, 18,
// 19). Thin: check the arguments the runtime hands over, call
// the communicator layer, map its error to the NRT_STATUS it carries.
#include "abi/export.h"
#include "comm/communicator.h"
#include "comm/settings.h"
#include "core/context.h"
#include "core/environment_report.h"
#include "graphbuild/comm_graph.h"
#include "log/log.h"
#include "net/selection.h"
#include "transport/comm_setup.h"

#include <sched.h>

#include <cstring>

namespace comm = nccom::comm;
namespace bootstrap = nccom::bootstrap;

namespace {

using nccom::abi::fail;

NRT_STATUS invalid(const char* what) {
  NCCOM_WARN("%s", what);
  return NRT_INVALID;
}

// The settings, choosing the bootstrap interface so that `root_comm_id`
// (when given) is reachable.
nccom::Result<const comm::BootstrapSettings*> settings_for(const char* root_comm_id) {
  bootstrap::SocketAddress root;
  if (root_comm_id != nullptr && root_comm_id[0] != '\0') {
    if (auto parsed = bootstrap::SocketAddress::parse(root_comm_id)) root = *parsed;
  }
  return comm::bootstrap_settings(root);
}

NRT_STATUS init(void** comm_out, const comm::InitRequest& request) {
  if (comm_out == nullptr) return invalid("communicator init: comm_out is NULL");
  *comm_out = nullptr;
  // From here on this thread's lines, and those of threads without a device
  // of their own, show the communicator's device ("[dev]").
  if (request.device != nullptr) {
    nccom::log::set_thread_device(request.device->nec_dev_id);
    nccom::log::note_process_device(request.device->nec_dev_id);
  }
  auto settings = settings_for(request.root_comm_id);
  if (!settings) return fail(settings.error());
  auto created = comm::Communicator::create(request, **settings);
  if (!created) return fail(created.error());
  *comm_out = comm::register_handle(std::move(created).value());
  return NRT_SUCCESS;
}

comm::Communicator* lookup(void* handle, const char* export_name) {
  comm::Communicator* found = comm::find_handle(handle);
  if (found == nullptr) {
    NCCOM_WARN("%s: %p is not a live communicator handle", export_name, handle);
  }
  return found;
}

NRT_STATUS report(const nccom::Status& status, const char* export_name) {
  if (status) return NRT_SUCCESS;
  NCCOM_WARN("%s (%s)", status.error().message.c_str(), export_name);
  return fail(status.error());
}

}  // namespace

NCCOM_API NRT_STATUS neuronGetUniqueId(char* id_out, int rank_n, const char* hint) {
  return nccom::abi::guard("neuronGetUniqueId", [&]() -> NRT_STATUS {
    if (id_out == nullptr) return invalid("neuronGetUniqueId: id_out is NULL");
    if (rank_n < 1) return invalid("neuronGetUniqueId: rank count must be positive");
    auto settings = settings_for(nullptr);
    if (!settings) return fail(settings.error());
    auto id = comm::get_unique_id(nullptr, rank_n, /*global=*/false, **settings);
    if (!id) {
      NCCOM_WARN("neuronGetUniqueId (%s): %s", hint != nullptr ? hint : "",
                 id.error().message.c_str());
      return fail(id.error());
    }
    const ncclUniqueId bytes = id->encode();
    std::memcpy(id_out, bytes.internal, sizeof bytes.internal);
    return NRT_SUCCESS;
  });
}

NCCOM_API NRT_STATUS neuronInitGlobalComm(int g_dev_id, int g_dev_count,
                                          const enc_neuron_device_info_t* dev,
                                          const char* root_comm_id, void** comm_out,
                                          const char* hint) {
  return nccom::abi::guard("neuronInitGlobalComm", [&]() -> NRT_STATUS {
    comm::InitRequest request;
    request.nranks = g_dev_count;
    request.rank = g_dev_id;
    request.device = dev;
    request.global = true;
    request.root_comm_id = root_comm_id;
    ncclUniqueId id{};
    if (root_comm_id == nullptr || root_comm_id[0] == '\0') {
      // No root address: only a one-rank world can proceed (it is its own root).
      if (g_dev_count != 1) {
        return invalid(
            "neuronInitGlobalComm: no root address (NEURON_RT_ROOT_COMM_ID) for a "
            "world of more than one rank");
      }
      auto settings = settings_for(nullptr);
      if (!settings) return fail(settings.error());
      auto made = comm::get_unique_id(nullptr, 1, true, **settings);
      if (!made) return fail(made.error());
      id = made->encode();
      request.id = &id;
    }
    return init(comm_out, request);
  });
}

NCCOM_API NRT_STATUS neuronInitComm(void** comm_out, int rank_n, char* id, int rank,
                                    const enc_neuron_device_info_t* dev, bool bypass_graph) {
  return nccom::abi::guard("neuronInitComm", [&]() -> NRT_STATUS {
    if (id == nullptr) return invalid("neuronInitComm: id is NULL");
    ncclUniqueId unique{};
    std::memcpy(unique.internal, id, sizeof unique.internal);
    comm::InitRequest request;
    request.nranks = rank_n;
    request.rank = rank;
    request.device = dev;
    request.id = &unique;
    return init(comm_out, request);
  });
}

namespace {

// Settings nothing uses are named once per process when a communicator of
// more than one rank has loaded every kind of plugin (net, topology,
// transport), so the variables their knobs read are known
// (environment_report.h).
void report_environment(const comm::Communicator& c) {
  if (c.nranks() <= 1) return;
  if (auto context = nccom::core::Context::get()) nccom::core::report_environment_once(**context);
}

// The second phase of bring-up (the original's buildGraphTransportsRank):
// topology, rings, kangaRing paths and MLA cycles, then a connector per ring
// channel and direction and the proxy scheduler over them. The environment
// report comes before a failure's WARN, whatever the outcome (a misspelt
// variable may be the cause), so that the failure stays the newest WARN the
// runtime's log received during the call.
NRT_STATUS build_graph_comm(comm::Communicator* c) {
  // The net plugin every rank will use for its rings (selected once per
  // process; a rank that has none says why, and the ranks compare that).
  std::string net_plugin;
  if (c->nranks() > 1) {
    auto selected = nccom::net::select();
    net_plugin = selected ? nccom::net::describe((*selected)->info())
                          : "none (" + selected.error().message + ")";
  }
  auto built = nccom::graphbuild::build_comm_graph(*c, net_plugin);
  if (!built) {
    report_environment(*c);
    NCCOM_WARN("%s (neuronBuildGraphComm, rank %d of %d)", built.error().message.c_str(), c->rank(),
               c->nranks());
    c->give_up_setup("neuronBuildGraphComm: " + built.error().message);
    return fail(built.error());
  }
  c->set_graph(std::move(built).value());
  nccom::Status t = nccom::transport::build_comm_transports(*c);
  report_environment(*c);
  if (!t) {
    NCCOM_WARN("%s (neuronBuildGraphComm, rank %d of %d: connecting the rings)",
               t.error().message.c_str(), c->rank(), c->nranks());
    c->give_up_setup("neuronBuildGraphComm: connecting the rings: " + t.error().message);
    return fail(t.error());
  }
  c->finish_setup();
  return NRT_SUCCESS;
}

}  // namespace

NCCOM_API NRT_STATUS neuronBuildGraphComm(void* handle) {
  return nccom::abi::guard("neuronBuildGraphComm", [&]() -> NRT_STATUS {
    comm::Communicator* c = lookup(handle, "neuronBuildGraphComm");
    if (c == nullptr) return NRT_INVALID_HANDLE;
    return build_graph_comm(c);
  });
}

// Ranks and peers; rings, kangaRing paths and MLA cycles once the graph is built.
NCCOM_API NRT_STATUS neuronGetCommInfo(void* handle, nccl_comm_info_t* out) {
  return nccom::abi::guard("neuronGetCommInfo", [&]() -> NRT_STATUS {
    comm::Communicator* c = lookup(handle, "neuronGetCommInfo");
    if (c == nullptr) return NRT_INVALID_HANDLE;
    if (out == nullptr) return invalid("neuronGetCommInfo: out is NULL");
    enc_peer_info_t* peers = out->peers;  // caller-allocated (or NULL): keep it
    std::memset(out, 0, sizeof *out);
    out->peers = peers;
    out->cluster_id = c->cluster_id();
    out->epoch = static_cast<time_t>(c->epoch());
    out->neuron_dev = c->device();
    out->rank = c->rank();
    out->rank_n = c->nranks();
    out->local_rank_n = c->local_rank_count();
    out->local_rack_rank_n = c->local_rank_count();
    out->node_n = c->node_count();
    out->node = 0;
    const auto& records = c->peers();
    for (int r = 0; r < c->nranks(); ++r) {  // node index: order of first appearance
      if (records[r].host_hash == records[c->rank()].host_hash) break;
      bool first = true;
      for (int q = 0; q < r; ++q) first = first && records[q].host_hash != records[r].host_hash;
      out->node += first ? 1 : 0;
    }
    out->use_net = out->node_n > 1;
    // Rings, kangaRing paths and MLA cycles, once neuronBuildGraphComm ran;
    // the arrays belong to the communicator (valid until the next build or
    // neuronFreeComm).
    if (const auto& g = c->graph()) {
      out->channel_n = g->rings.nChannels;
      for (int ch = 0; ch < g->rings.nChannels && ch < NEC_MAX_CHANNELS; ++ch) {
        const auto& ring = g->rings.channels[ch];
        out->rings[ch].prev = ring.prev;
        out->rings[ch].next = ring.next;
        out->rings[ch].user_ranks = const_cast<int*>(ring.userRanks.data());
        out->rings[ch].duplicate = ring.duplicate;
      }
      out->kangaring_channel_n = static_cast<int>(g->kangaRing.size());
      for (size_t k = 0; k < g->kangaRing.size() && k < NEC_MAX_CHANNELS; ++k) {
        out->kangaring_paths[k] = const_cast<int*>(g->kangaRing[k].data());
      }
      out->mla_cycle_n = static_cast<int>(g->mla.cycles.size());
      for (size_t m = 0; m < g->mla.cycles.size() && m < NEC_MAX_CHANNELS; ++m) {
        out->mla_cycles[m] = const_cast<int*>(g->mla.cycles[m].data());
      }
    }
    if (peers != nullptr) {
      for (int r = 0; r < c->nranks(); ++r) {
        peers[r].neuron_dev = records[r].device;
        peers[r].rid = records[r].mla_idx;
        peers[r].tpb_index = 0;
        peers[r].pod_node_id = records[r].pod_node_id;
      }
    }
    return NRT_SUCCESS;
  });
}

NCCOM_API NRT_STATUS neuronFreeComm(void* handle) {
  return nccom::abi::guard("neuronFreeComm", [&]() -> NRT_STATUS {
    auto c = comm::release_handle(handle);
    if (!c) {
      NCCOM_WARN("neuronFreeComm: %p is not a live communicator handle", handle);
      return NRT_INVALID_HANDLE;
    }
    c.reset();  // closes every socket of its mesh
    comm::reap_roots();
    return NRT_SUCCESS;
  });
}

NCCOM_API NRT_STATUS neuronBootstrapSend(void* state, int peer, void* data, size_t size,
                                         const char* hint) {
  return nccom::abi::guard("neuronBootstrapSend", [&]() -> NRT_STATUS {
    comm::Communicator* c = lookup(state, "neuronBootstrapSend");
    if (c == nullptr) return NRT_INVALID_HANDLE;
    if (data == nullptr && size > 0) return invalid("neuronBootstrapSend: data is NULL");
    return report(c->send(peer, bootstrap::MsgType::kUser, data, size), "neuronBootstrapSend");
  });
}

NCCOM_API NRT_STATUS neuronBootstrapRecv(void* state, int peer, void* data, size_t size,
                                         const char* hint) {
  return nccom::abi::guard("neuronBootstrapRecv", [&]() -> NRT_STATUS {
    comm::Communicator* c = lookup(state, "neuronBootstrapRecv");
    if (c == nullptr) return NRT_INVALID_HANDLE;
    if (data == nullptr && size > 0) return invalid("neuronBootstrapRecv: data is NULL");
    return report(c->recv(peer, bootstrap::MsgType::kUser, data, size), "neuronBootstrapRecv");
  });
}

NCCOM_API NRT_STATUS neuronBootstrapAllGather(void* state, void* all_data, size_t size_per_rank,
                                              const char* hint) {
  return nccom::abi::guard("neuronBootstrapAllGather", [&]() -> NRT_STATUS {
    comm::Communicator* c = lookup(state, "neuronBootstrapAllGather");
    if (c == nullptr) return NRT_INVALID_HANDLE;
    if (all_data == nullptr && size_per_rank > 0)
      return invalid("neuronBootstrapAllGather: data is NULL");
    return report(c->all_gather(all_data, size_per_rank), "neuronBootstrapAllGather");
  });
}

NCCOM_API NRT_STATUS neuronGetPeerDeviceId(void* handle, int peer, int* dev_out) {
  return nccom::abi::guard("neuronGetPeerDeviceId", [&]() -> NRT_STATUS {
    comm::Communicator* c = lookup(handle, "neuronGetPeerDeviceId");
    if (c == nullptr) return NRT_INVALID_HANDLE;
    if (dev_out == nullptr || peer < 0 || peer >= c->nranks()) {
      return invalid("neuronGetPeerDeviceId: bad peer or NULL output");
    }
    *dev_out = c->peers()[peer].device;
    return NRT_SUCCESS;
  });
}

// Saves the caller's mask, then applies `override_mask` when given. The
// original's topology-driven choice (ncclTopoSetAffinity) is not made: no
// override means the mask is left as it is.
NCCOM_API NRT_STATUS neuronSetAffinity(void* handle, nccom_cpu_set_t* override_mask,
                                       nccom_cpu_set_t* save, int core) {
  return nccom::abi::guard("neuronSetAffinity", [&]() -> NRT_STATUS {
    comm::Communicator* c = lookup(handle, "neuronSetAffinity");
    if (c == nullptr) return NRT_INVALID_HANDLE;
    if (save != nullptr && sched_getaffinity(0, sizeof(cpu_set_t), save) != 0) {
      NCCOM_WARN("neuronSetAffinity: sched_getaffinity failed: %s", std::strerror(errno));
      return NRT_FAILURE;
    }
    if (override_mask != nullptr && sched_setaffinity(0, sizeof(cpu_set_t), override_mask) != 0) {
      NCCOM_WARN("neuronSetAffinity: sched_setaffinity failed: %s", std::strerror(errno));
      return NRT_FAILURE;
    }
    return NRT_SUCCESS;
  });
}
