// Probing a net plugin's discovery calls where a crash is survivable.
//
// init, devices and getProperties are the first calls the host makes into a
// plugin, and the ones a careless plugin crashes in (devices(NULL)
// dereferenced, a getProperties that leaves wild pointers behind, an init
// that calls exit). Before the host commits to a plugin that is not nccom's
// own, it runs those calls once in a short-lived child process, the probe
// program (nccom-net-probe, shipped beside the plugins): a crash, an exit or
// a call that does not return there rejects the plugin with a message naming
// the call, and selection goes on with the next candidate instead of the
// process dying. The child is spawned (posix_spawn: no copy of this
// process's memory, no lock of its threads inherited), binds the file in the
// same layout, and reports each call on a pipe of its own before making it
// (probe_main.cc: "call init", "call devices", "call getProperties N",
// "done").
//
// What the probe does not decide: a plugin whose calls merely fail (an init
// error, no devices) is left to the in-process selection, which reports that
// in its usual words. A plugin whose calls succeed in the probe is then
// loaded for real; a crash that depends on state the probe does not have
// (nccom's configure call, a second init) is not caught.
#pragma once

#include "net/net.h"

#include <nccom/util/result.h>

#include <chrono>
#include <filesystem>
#include <string>

namespace nccom::net {

// The probe program beside libnccom's plugin directory
// (<libdir>/nccom/nccom-net-probe); empty when it is not there.
std::filesystem::path probe_program();

// Whether `file` is one of nccom's own plugins: it lies in libnccom's own
// directory or in its plugin directory.
bool is_own_plugin(const std::string& file);

// Runs the discovery calls of the plugin in `file` (bound in `layout`) in a
// child process running `program`, for at most `bound`. An error when a call
// crashed, ended the process or did not return: "its devices() crashed with
// signal 11 (SIGSEGV) in a probe process". Success when every call returned
// (whatever it answered), or when the probe could not run at all (then an
// INFO says why).
Status probe_discovery(const std::filesystem::path& program, const std::string& file, Layout layout,
                       std::chrono::milliseconds bound);

}  // namespace nccom::net
