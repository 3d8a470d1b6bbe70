// What libnccom tells the operator, once per process, about settings it
// will not use: a variable that looks like nccom's but that nothing reads
// (WARN, with the closest known name), an NCCL setting nccom does not read
// (INFO, subsystem ENV), and a [plugins.<name>] section of the file that
// names no plugin nccom can find (WARN with the closest plugin name, else
// INFO). The notes themselves are config/environment.h's, shared with
// nccom-config.
//
// When: after the first communicator of more than one rank has loaded its
// plugins (neuronBuildGraphComm: net, topology and transport plugins), so
// the variables their knobs declare are known. A process whose
// communicators all have one rank loads no net plugin and reports nothing.
#pragma once

#include "core/context.h"

#include <string>
#include <vector>

namespace nccom::core {

struct EnvironmentReport {
  std::vector<std::string> warnings;  // one WARN line each
  std::vector<std::string> infos;     // one INFO (ENV) line each
};

// The lines for `environ_names` (the variables set in the environment)
// against the context's configuration and the plugins bound to it so far.
EnvironmentReport environment_report(const Context& context,
                                     const std::vector<std::string>& environ_names);

// Logs environment_report() of the process's environment the first time it
// is called in the process; later calls do nothing.
void report_environment_once(const Context& context);

}  // namespace nccom::core
