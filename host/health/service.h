// The health service of one process: a thread started with the first
// communicator that
//  - keeps a keep-alive link with its two successors in the ring of the job's
//    processes (ordered by process key), so every process is watched by two
//    others, and classifies a silent peer as unresponsive and a closed one as
//    dead;
//  - answers other processes' queries with this process's snapshot;
//  - serves nccom-ras (and NCCL's ncclras) on a local client port, gathering
//    every process's snapshot into one report;
//  - watches every proxy stream of this process: a stall logs one WARN that
//    names the peer it waits on and what that peer's process is doing, and a
//    longer one fails the stream with that message.
//
// All of it runs on one thread with non-blocking sockets and poll(): a slow or
// hostile client or peer costs one connection slot and a bounded buffer, never
// the thread. docs/health.md has the rules, ports and costs.
#pragma once

#include "bootstrap/socket_address.h"
#include "health/state.h"
#include "health/watch.h"
#include "health/wire.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nccom::health {

// Starts the service on first call (the peer port on `host`'s address, an
// ephemeral port) and returns this process's card; later calls return the
// same card. With the service disabled, or when it cannot start (the reason
// is logged once), the card says so and nothing runs.
// `host_label` names this process's host in every report (the host name, or
// NCCL_HOSTID, with the runtime's virtual server when it is not 0).
Card ensure_service(const ServiceSettings& settings, const bootstrap::SocketAddress& host,
                    const std::string& host_label);

// Whether the service's thread runs in this process.
bool service_running();

// A communicator this process is a rank of: its record, its bootstrap secret
// (which peers present on the health links) and every rank's card.
void add_comm(const std::shared_ptr<CommRecord>& record, uint64_t secret,
              const std::vector<Card>& cards);
// Called when the communicator is freed. When it was the last one, the links
// say goodbye before this returns (bounded by 200 ms).
void remove_comm(const CommRecord* record);

// The settings in force (the defaults when no service was started).
ServiceSettings service_settings();

// Stops the thread and forgets everything (tests; at exit it stops itself).
void stop_service();

}  // namespace nccom::health
