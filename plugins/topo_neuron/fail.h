// The one place errors of this library are made. The error is not logged
// here: it travels back through the plugin's error buffer (or the tool's
// Result) and is logged once, where it is reported.
#pragma once

#include <nccom/util/result.h>

#include <string>

namespace nccom::topo_neuron {

inline Error fail(NRT_STATUS status, std::string message) {
  return make_error(status, std::move(message));
}

}  // namespace nccom::topo_neuron
