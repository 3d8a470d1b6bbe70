// Proxy and NET_NEURON transport exports (export-table slots 7–10, 14–17, 20).
// Enum-valued arguments (pattern, connectivity, comm type, memory type)
// arrive as the integers libnrt passed and are checked by the code that
// interprets them; nothing here reads them as enums.
// The scheduler and the connectors belong to the communicator's transports,
// built by neuronBuildGraphComm (host/transport/comm_setup.h).
#include "abi/export.h"
#include "comm/communicator.h"
#include "log/log.h"
#include "proxy/fifo.h"
#include "transport/comm_setup.h"
#include "transport/preferred_nic.h"

namespace comm = nccom::comm;
namespace transport = nccom::transport;

namespace {

// The communicator's transports, or nullptr after one WARN naming the export.
transport::CommTransports* transports(void* handle, const char* export_name) {
  comm::Communicator* c = comm::find_handle(handle);
  if (c == nullptr) {
    NCCOM_WARN("%s: %p is not a live communicator handle", export_name, handle);
    return nullptr;
  }
  auto t = transport::transports_of(*c, export_name);
  if (!t) {
    NCCOM_WARN("%s", t.error().message.c_str());
    return nullptr;
  }
  return *t;
}

NRT_STATUS status_of(const nccom::Error& e) {
  return e.status == NRT_SUCCESS ? NRT_FAILURE : e.status;
}

}  // namespace

// Collective: every rank calls it with the same argument (agreed first, so a
// mismatch fails on every rank). MESH: a send and a receive end to every
// other rank; RDH: to the recursive doubling/halving partners; DEFAULT: the
// rings only. Each pair over the transport the selection picks (NET_NEURON
// across servers, P2P within one); idempotent (docs/decisions/transport.md).
NCCOM_API NRT_STATUS neuronExpandConnectivity(void* comm, uint32_t conn) {
  return nccom::abi::guard("neuronExpandConnectivity", [&]() -> NRT_STATUS {
    comm::Communicator* c = comm::find_handle(comm);
    if (c == nullptr) {
      NCCOM_WARN("neuronExpandConnectivity: %p is not a live communicator handle", comm);
      return NRT_INVALID_HANDLE;
    }
    auto t = transport::transports_of(*c, "neuronExpandConnectivity");
    if (!t) {
      NCCOM_WARN("%s", t.error().message.c_str());
      return NRT_INVALID;
    }
    if (nccom::Status s = (*t)->expand(*c, conn); !s) {
      const nccom::Error e = nccom::in_context(
          s.take_error(), "neuronExpandConnectivity, rank " + std::to_string(c->rank()) + " of " +
                              std::to_string(c->nranks()));
      NCCOM_WARN("%s", e.message.c_str());
      return status_of(e);
    }
    return NRT_SUCCESS;
  });
}

NCCOM_API NRT_STATUS neuronStartNetworkProxy(void* comm, uint32_t stream, uint32_t basic_block_id,
                                             net_ops_info_t* ops, int ops_n, net_src_addr_t* src,
                                             int src_n, net_dest_addr_t* dst, int dst_n) {
  return nccom::abi::guard("neuronStartNetworkProxy", [&]() -> NRT_STATUS {
    transport::CommTransports* t = transports(comm, "neuronStartNetworkProxy");
    if (t == nullptr) return NRT_INVALID_HANDLE;
    nccom::proxy::Scheduler* sched = t->scheduler();
    if (sched == nullptr) {
      NCCOM_WARN(
          "neuronStartNetworkProxy: no transport of this communicator has a proxy "
          "(transport.plugins needs net_neuron)");
      return NRT_FAILURE;
    }
    const nccom::proxy::BlockFifos fifos{ops, ops_n, src, src_n, dst, dst_n};
    if (nccom::Status s = sched->start(stream, basic_block_id, fifos); !s) {
      NCCOM_WARN("%s", s.error().message.c_str());
      return status_of(s.error());
    }
    return NRT_SUCCESS;
  });
}

NCCOM_API NRT_STATUS neuronStopNetworkProxy(void* comm, uint32_t stream) {
  return nccom::abi::guard("neuronStopNetworkProxy", [&]() -> NRT_STATUS {
    transport::CommTransports* t = transports(comm, "neuronStopNetworkProxy");
    if (t == nullptr) return NRT_INVALID_HANDLE;
    if (t->scheduler() == nullptr) return NRT_SUCCESS;  // nothing was ever registered
    if (nccom::Status s = t->scheduler()->stop(stream); !s) {
      NCCOM_WARN("%s", s.error().message.c_str());
      return status_of(s.error());
    }
    return NRT_SUCCESS;
  });
}

// Any failure of the progress path is NRT_NETWORK_PROXY_FAILURE, as in the
// original.
// idle/done are assigned, not AND-ed (docs/decisions.md, "Proxy").
NCCOM_API NRT_STATUS neuronNetworkProxyProgress(void* comm, uint32_t stream,
                                                uint32_t basic_block_id, bool* idle, bool* done) {
  return nccom::abi::guard("neuronNetworkProxyProgress", [&]() -> NRT_STATUS {
    if (idle == nullptr || done == nullptr) {
      NCCOM_WARN("neuronNetworkProxyProgress: idle or done is NULL");
      return NRT_NETWORK_PROXY_FAILURE;
    }
    transport::CommTransports* t = transports(comm, "neuronNetworkProxyProgress");
    if (t == nullptr || t->scheduler() == nullptr) return NRT_NETWORK_PROXY_FAILURE;
    auto p = t->scheduler()->progress(stream, basic_block_id);
    if (!p) return NRT_NETWORK_PROXY_FAILURE;  // the scheduler logged it once, as WARN
    *idle = p->idle;
    *done = p->done;
    return NRT_SUCCESS;
  });
}

// a = the runtime device id (enc_peer_info.neuron_dev), b = its routing id
// (enc_peer_info.rid); the answer is the net device index nearest to that
// device, from what neuronBuildGraphComm learnt in this process
// (docs/decisions/transport.md, "neuronPreferredNcRidNic[Bdf]").
NCCOM_API NRT_STATUS neuronPreferredNcRidNic(uint32_t a, uint32_t b, int* nic_out) {
  return nccom::abi::guard("neuronPreferredNcRidNic", [&]() -> NRT_STATUS {
    if (nic_out == nullptr) {
      NCCOM_WARN("neuronPreferredNcRidNic: nic_out is NULL");
      return NRT_INVALID;
    }
    auto nic = transport::preferred_nic_of_process(a, b);
    if (!nic) {
      NCCOM_WARN("neuronPreferredNcRidNic(%u, %u): %s", a, b, nic.error().message.c_str());
      return status_of(nic.error());
    }
    *nic_out = nic->index;
    return NRT_SUCCESS;
  });
}

// The same NIC as its PCI address "dddd:bb:dd.f" (NUL-terminated, so
// bdf_len must be at least 13); a NIC without a PCI device is an error.
NCCOM_API NRT_STATUS neuronPreferredNcRidNicBdf(uint32_t a, uint32_t b, char* bdf_out,
                                                size_t bdf_len) {
  return nccom::abi::guard("neuronPreferredNcRidNicBdf", [&]() -> NRT_STATUS {
    if (bdf_out == nullptr) {
      NCCOM_WARN("neuronPreferredNcRidNicBdf: bdf_out is NULL");
      return NRT_INVALID;
    }
    auto nic = transport::preferred_nic_of_process(a, b);
    if (!nic) {
      NCCOM_WARN("neuronPreferredNcRidNicBdf(%u, %u): %s", a, b, nic.error().message.c_str());
      return status_of(nic.error());
    }
    if (nccom::Status w = transport::write_bdf(*nic, bdf_out, bdf_len); !w) {
      NCCOM_WARN("neuronPreferredNcRidNicBdf(%u, %u): %s", a, b, w.error().message.c_str());
      return status_of(w.error());
    }
    return NRT_SUCCESS;
  });
}

NCCOM_API NRT_STATUS neuronNetRegMr(void* comm, uint32_t pattern, int channel, bool is_send,
                                    uint32_t comm_type, void* addr, size_t size, int32_t type,
                                    void** mhandle_out) {
  return nccom::abi::guard("neuronNetRegMr", [&]() -> NRT_STATUS {
    if (mhandle_out == nullptr) {
      NCCOM_WARN("neuronNetRegMr: mhandle_out is NULL");
      return NRT_INVALID;
    }
    transport::CommTransports* t = transports(comm, "neuronNetRegMr");
    if (t == nullptr) return NRT_INVALID_HANDLE;
    auto mh = t->reg_mr(pattern, channel, is_send, addr, size, type);
    if (!mh) {
      NCCOM_WARN("neuronNetRegMr: %s", mh.error().message.c_str());
      return status_of(mh.error());
    }
    *mhandle_out = *mh;
    return NRT_SUCCESS;
  });
}

NCCOM_API NRT_STATUS neuronNetDeregMr(void* comm, uint32_t pattern, int channel, bool is_send,
                                      uint32_t comm_type, void* mhandle) {
  return nccom::abi::guard("neuronNetDeregMr", [&]() -> NRT_STATUS {
    transport::CommTransports* t = transports(comm, "neuronNetDeregMr");
    if (t == nullptr) return NRT_INVALID_HANDLE;
    if (nccom::Status s = t->dereg_mr(pattern, channel, is_send, mhandle); !s) {
      NCCOM_WARN("neuronNetDeregMr: %s", s.error().message.c_str());
      return status_of(s.error());
    }
    return NRT_SUCCESS;
  });
}

// RING: channel = ring channel; MESH: channel = the peer's rank (after
// neuronExpandConnectivity). A hop carried by a proxy-free transport (P2P,
// same server) is not a network hop: NRT_SUCCESS with *connector_out = NULL,
// and the runtime moves that hop's data itself.
NCCOM_API NRT_STATUS neuronGetNetConnector(void* comm, uint32_t pattern, int channel, bool is_send,
                                           void** connector_out) {
  return nccom::abi::guard("neuronGetNetConnector", [&]() -> NRT_STATUS {
    if (connector_out == nullptr) {
      NCCOM_WARN("neuronGetNetConnector: connector_out is NULL");
      return NRT_INVALID;
    }
    transport::CommTransports* t = transports(comm, "neuronGetNetConnector");
    if (t == nullptr) return NRT_INVALID_HANDLE;
    auto c = t->connector(pattern, channel, is_send);
    if (!c) {
      NCCOM_WARN("neuronGetNetConnector: %s", c.error().message.c_str());
      return status_of(c.error());
    }
    *connector_out = *c;
    return NRT_SUCCESS;
  });
}
