// neuronBuildGraphComm's transport step for a live communicator: the
// transport plugins named by transport.plugins (loaded once per process),
// the process's net plugin in the v6 shape, then CommTransports::connect
// over the communicator's rings.
#pragma once

#include "comm/communicator.h"
#include "transport/comm_transports.h"

#include <nccom/util/result.h>

namespace nccom::transport {

Status build_comm_transports(comm::Communicator& comm);

// The communicator's transports, or an error naming the export that needs
// them (neuronBuildGraphComm has not run).
Result<CommTransports*> transports_of(comm::Communicator& comm, const char* export_name);

}  // namespace nccom::transport
