// The process-level part of ncclInit for the bootstrap (bootstrapNetInit and
// the socket timeout): the bootstrap settings from the configuration and the
// interface the bootstrap listens on, chosen once per process.
#pragma once

#include "bootstrap/interfaces.h"
#include "bootstrap/wire.h"
#include "health/watch.h"

#include <nccom/util/result.h>

#include <chrono>
#include <string>

namespace nccom::comm {

struct BootstrapSettings {
  std::chrono::milliseconds socket_timeout{120000};
  std::chrono::milliseconds handshake_timeout{120000};
  std::string protocol = "auto";   // auto | flat | hierarchical
  std::string secret;              // for host:port roots
  std::string host_id;             // NCCL_HOSTID
  bootstrap::Interface interface;  // where this process's ranks listen
  // bootstrap.root_comm_id (NEURON_RT_ROOT_COMM_ID, which the runtime reads
  // too) and where it was set ("environment NEURON_RT_ROOT_COMM_ID"), so the
  // INFO about a root address the runtime passes names where it came from.
  std::string configured_root;
  std::string configured_root_set_by;
};

// The INFO line's "<what> to <address>" for a root address the runtime
// passed: "set by environment NEURON_RT_ROOT_COMM_ID" when that is where
// the address is configured, else "passed by the runtime".
std::string root_comm_id_origin(const BootstrapSettings& settings, const std::string& address);

// Resolved once per process (later calls return the first outcome). `root`
// is the root address when one is known: the interface is chosen to reach it.
Result<const BootstrapSettings*> bootstrap_settings(const bootstrap::SocketAddress& root = {});

// The health service's settings from the configuration (health.*).
Result<health::ServiceSettings> health_settings();

// The protocol a communicator uses, the same on every rank: forced by
// bootstrap.protocol, or (auto) hierarchical for a global communicator of
// more ranks than this instance has vNCs.
bootstrap::Protocol choose_protocol(const BootstrapSettings& settings, bool global, int nranks);

}  // namespace nccom::comm
