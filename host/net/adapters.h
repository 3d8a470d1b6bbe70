// The adapters: one factory per table version and layout (adapter_*.cc),
// and the table checks they share (table_check.cc). bind.cc finds the
// table and checks its size; the factory checks the slots and returns the
// Net that serves it (check_table below says what it refuses).
//
// Mandatory in every version: init, devices, getProperties, listen, connect,
// accept, regMr, deregMr, isend, irecv, test, closeSend, closeRecv,
// closeListen. Optional (may be NULL; the adapter answers "unsupported"):
// fini, regMrDmaBuf, iflush, getMrKey, iwrite, iwriteInline, iread.
#pragma once

#include "net/net.h"
#include "plugin/load_error.h"
#include "plugin/shared_library.h"

#include <initializer_list>
#include <memory>
#include <string>

namespace nccom::net {

using BindResult = Result<std::unique_ptr<Net>, plugin::LoadError>;

// One exported table found in a library.
struct BoundTable {
  const void* table = nullptr;  // the symbol's address
  const char* symbol = "";      // "ncclNetPlugin_v6"
  std::string where;            // for messages: the file, or "the runtime's libnccom-net.so"
  std::string origin;           // becomes PluginInfo::origin
  std::unique_ptr<plugin::SharedLibrary> library;  // null when borrowed (runtime handle)
};

BindResult adapt_neuron_v6(BoundTable table);
BindResult adapt_neuron_v5(BoundTable table);
BindResult adapt_neuron_v4(BoundTable table);
BindResult adapt_nvidia_v6(BoundTable table);
BindResult adapt_nvidia_v5(BoundTable table);
BindResult adapt_nvidia_v4(BoundTable table);

// For the factories: a slot by name and address.
struct Slot {
  const char* name;
  const void* address;
};
template <class Fn>
Slot slot(const char* name, Fn* fn) {
  return Slot{name, reinterpret_cast<const void*>(fn)};
}

// Checks the name field and the slots: a NULL mandatory slot is a NullSlot
// error ("<where>: ncclNetPlugin_v6 has NULL mandatory slot irecv"); a
// non-NULL slot (mandatory or optional) or name that points into no loaded
// object is a BadDescriptor error (typically a table of another layout read
// past its end).
Result<void, plugin::LoadError> check_table(const BoundTable& table, const char* name,
                                            std::initializer_list<Slot> mandatory,
                                            std::initializer_list<Slot> optional = {});

// The size the ELF symbol at `address` records, or 0 when unknown.
std::size_t symbol_size(const void* address);

// AbiMismatch when the symbol records a size other than `expected`; the
// message says so when the size is that of the other family's table of the
// same name (`other_layout`), since that is what such a plugin usually is.
Result<void, plugin::LoadError> check_symbol_size(const BoundTable& table, Layout layout,
                                                  std::size_t expected, std::size_t other_layout);

}  // namespace nccom::net
