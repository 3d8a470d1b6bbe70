// The one place errors of this library are made: the function that first
// classifies an error logs it (WARN, GRAPH) and callers only propagate.
#pragma once

#include "common/result.h"
#include "log/log.h"

#include <string>

namespace nccom::topo_neuron {

inline Error fail(NRT_STATUS status, std::string message) {
  NCCOM_WARN("%s", message.c_str());
  return make_error(status, std::move(message));
}

}  // namespace nccom::topo_neuron
