// Proxy and NET_NEURON transport exports (abi.md §3 slots 7–10, 14–17, 20).
// The scheduler and the connectors belong to the communicator's transports,
// built by neuronBuildGraphComm (host/transport/comm_setup.h).
#include "abi/export.h"
#include "comm/communicator.h"
#include "log/log.h"
#include "proxy/fifo.h"
#include "transport/comm_setup.h"

using nccom::abi::not_implemented;
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

NCCOM_API NRT_STATUS neuronExpandConnectivity(void* comm, enc_net_connectivity_t conn) {
  return not_implemented("neuronExpandConnectivity", 6);
}

NCCOM_API NRT_STATUS neuronStartNetworkProxy(void* comm, uint32_t stream, uint32_t basic_block_id,
                                             net_ops_info_t* ops, int ops_n, net_src_addr_t* src,
                                             int src_n, net_dest_addr_t* dst, int dst_n) {
  transport::CommTransports* t = transports(comm, "neuronStartNetworkProxy");
  if (t == nullptr) return NRT_INVALID_HANDLE;
  nccom::proxy::Scheduler* sched = t->scheduler();
  if (sched == nullptr) {
    NCCOM_WARN("neuronStartNetworkProxy: no transport of this communicator has a proxy "
               "(transport.plugins needs net_neuron)");
    return NRT_FAILURE;
  }
  const nccom::proxy::BlockFifos fifos{ops, ops_n, src, src_n, dst, dst_n};
  if (nccom::Status s = sched->start(stream, basic_block_id, fifos); !s) {
    NCCOM_WARN("%s", s.error().message.c_str());
    return status_of(s.error());
  }
  return NRT_SUCCESS;
}

NCCOM_API NRT_STATUS neuronStopNetworkProxy(void* comm, uint32_t stream) {
  transport::CommTransports* t = transports(comm, "neuronStopNetworkProxy");
  if (t == nullptr) return NRT_INVALID_HANDLE;
  if (t->scheduler() == nullptr) return NRT_SUCCESS;  // nothing was ever registered
  if (nccom::Status s = t->scheduler()->stop(stream); !s) {
    NCCOM_WARN("%s", s.error().message.c_str());
    return status_of(s.error());
  }
  return NRT_SUCCESS;
}

// Any failure of the progress path is NRT_NETWORK_PROXY_FAILURE (abi.md §4).
// idle/done are assigned, not AND-ed (docs/decisions.md, "Proxy").
NCCOM_API NRT_STATUS neuronNetworkProxyProgress(void* comm, uint32_t stream,
                                                uint32_t basic_block_id, bool* idle, bool* done) {
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
}

NCCOM_API NRT_STATUS neuronPreferredNcRidNic(uint32_t a, uint32_t b, int* nic_out) {
  return not_implemented("neuronPreferredNcRidNic", 6);
}

NCCOM_API NRT_STATUS neuronPreferredNcRidNicBdf(uint32_t a, uint32_t b, char* bdf_out,
                                                size_t bdf_len) {
  return not_implemented("neuronPreferredNcRidNicBdf", 6);
}

NCCOM_API NRT_STATUS neuronNetRegMr(void* comm, enc_pattern_t pattern, int channel, bool is_send,
                                    ofi_comm_type_t comm_type, void* addr, size_t size,
                                    nccl_ptr_type type, void** mhandle_out) {
  if (mhandle_out == nullptr) {
    NCCOM_WARN("neuronNetRegMr: mhandle_out is NULL");
    return NRT_INVALID;
  }
  transport::CommTransports* t = transports(comm, "neuronNetRegMr");
  if (t == nullptr) return NRT_INVALID_HANDLE;
  auto mh = t->reg_mr(pattern, channel, is_send, addr, size, static_cast<int>(type));
  if (!mh) {
    NCCOM_WARN("neuronNetRegMr: %s", mh.error().message.c_str());
    return status_of(mh.error());
  }
  *mhandle_out = *mh;
  return NRT_SUCCESS;
}

NCCOM_API NRT_STATUS neuronNetDeregMr(void* comm, enc_pattern_t pattern, int channel,
                                      bool is_send, ofi_comm_type_t comm_type, void* mhandle) {
  transport::CommTransports* t = transports(comm, "neuronNetDeregMr");
  if (t == nullptr) return NRT_INVALID_HANDLE;
  if (nccom::Status s = t->dereg_mr(pattern, channel, is_send, mhandle); !s) {
    NCCOM_WARN("neuronNetDeregMr: %s", s.error().message.c_str());
    return status_of(s.error());
  }
  return NRT_SUCCESS;
}

NCCOM_API NRT_STATUS neuronGetNetConnector(void* comm, enc_pattern_t pattern, int channel,
                                           bool is_send, void** connector_out) {
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
}
