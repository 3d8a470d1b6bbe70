// Binding a net plugin: find its table, check it, wrap it in the adapter for
// its version and layout.
//
// Layout::kNeuron probes ncclNetPlugin_v6, then _v5, then _v4 (newest
// first). Layout::kNvidia probes the same names read with NVIDIA's slot
// orders, and is used only when configured explicitly: the symbol names are
// identical, so nothing in the file says which family it was built for, and
// calling a Neuron slot on an NVIDIA table lands on the wrong function (fini
// where devices is expected, ...). The symbol's recorded size catches most
// mix-ups (v5/v6 tables differ in size between the families) and is reported
// as AbiMismatch with a hint at net.plugin_layout.
//
// The first symbol found decides: a broken table is this plugin's error, and
// the older symbols are not tried (they come from the same build); the
// caller moves on to its next candidate plugin.
//
// Errors (plugin::LoadErrorKind): NotFound, DlopenFailed, MissingSymbol
// ("Failed to find ncclNetPlugin_v6 symbol. ..."), AbiMismatch (symbol size),
// NullSlot (NULL name or mandatory slot), BadDescriptor (slot pointing into
// no loaded object).
#pragma once

#include "net/net.h"
#include "plugin/load_error.h"
#include "plugin/shared_library.h"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace nccom::net {

using BindResult = Result<std::unique_ptr<Net>, plugin::LoadError>;

// Binds a library the host opened; the Net owns it from then on.
BindResult bind_library(plugin::SharedLibrary library, Layout layout, std::string origin);

// Binds a raw dlopen handle the host does not own (the runtime's): it is
// never dlclose'd here. `where` names it in messages.
BindResult bind_handle(void* dl_handle, Layout layout, std::string where, std::string origin);

// Where a configured plugin is looked for: a string containing '/' is a path
// and the only candidate; a bare name `x` is tried in each directory, in
// order, as libnccom-net-x.so, then libnccom-x.so.
std::vector<std::filesystem::path> plugin_paths(const std::string& name_or_path,
                                                const std::vector<std::filesystem::path>& dirs);

// Locates (plugin_paths: the first that exists), opens and binds.
BindResult open_and_bind(const std::string& name_or_path, Layout layout,
                         const std::vector<std::filesystem::path>& dirs, std::string origin);

}  // namespace nccom::net
