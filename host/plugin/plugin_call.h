// What the kind-specific host adapters (topology, transport) share when they
// call into a plugin: the error buffer the C calls fill, its text (even when
// the plugin forgot the terminator), status names, and the one wording of a
// failed call.
#pragma once

#include "plugin/plugin_loader.h"

#include <nccom/plugin.h>
#include <nccom/util/result.h>

#include <array>
#include <string>

namespace nccom::plugin {

using ErrorBuffer = std::array<char, 1024>;

std::string error_text(const ErrorBuffer& buffer);
const char* status_name(nccom_plugin_status_t status);

// "<kind> plugin <name> (<path>): <call> returned <STATUS>[: <detail>]", as
// NRT_INVALID for INVALID_ARGUMENT and NRT_FAILURE otherwise.
Error call_failure(const LoadedPlugin& plugin, const char* kind, const char* call,
                   nccom_plugin_status_t status, const std::string& detail);

}  // namespace nccom::plugin
