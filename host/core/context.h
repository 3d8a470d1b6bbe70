// The process-wide host context: configuration and logging, set up lazily on
// the first entry point that needs them (never at load time, never by
// neuronGetVersionInfo).
#pragma once

#include "common/result.h"

namespace nccom::core {

// Loads the configuration, configures logging and installs the runtime's log
// sink, once per process. Later calls return the first outcome.
Status ensure_initialized();

}  // namespace nccom::core
