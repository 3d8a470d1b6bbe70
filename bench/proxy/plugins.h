// Loading the plugins the benchmark drives, and the seam between the host's
// proxy scheduler and the transport plugin's op vtable.
#pragma once

#include "proxy/scheduler.h"

#include <nccom/transport_plugin.h>

#include <memory>

namespace nccom::bench {

// A ProxyTransport over a transport plugin's create_op/op_* slots for one
// communicator: the same mapping as the host's (host/transport/
// transport_backend.cc, PluginProxyTransport), written here because that
// class is internal to libnccom's transport layer.
std::unique_ptr<proxy::ProxyTransport> plugin_proxy_transport(const nccom_transport_ops_t* ops,
                                                              void* ctx,
                                                              const nccom_transport_comm_t* comm);

}  // namespace nccom::bench
