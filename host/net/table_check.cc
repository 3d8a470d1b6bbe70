// What the host can check about an exported table before calling through it:
// the symbol's size (the ELF symbol records it), the name field, NULL
// mandatory slots, and whether each slot points into some loaded object.
//
// What it cannot check: the parameter lists behind each slot. A table of
// another layout with the right size and plausible pointers (NVIDIA v4 read
// as Neuron v4, which is compatible anyway) is indistinguishable.
#include "net/adapters.h"

#include <dlfcn.h>
#include <link.h>

namespace nccom::net {
namespace {

plugin::LoadError error(plugin::LoadErrorKind kind, const BoundTable& t, const std::string& what) {
  return plugin::LoadError{kind, t.where, t.where + ": " + t.symbol + " " + what};
}

// Code lives in a mapped object; a slot read past the end of a smaller table
// usually does not (it is data, zero, or another table's name).
bool in_loaded_object(const void* address) {
  Dl_info info{};
  return dladdr(address, &info) != 0 && info.dli_fname != nullptr;
}

}  // namespace

std::size_t symbol_size(const void* address) {
  Dl_info info{};
  void* entry = nullptr;  // a const ElfW(Sym)*
  if (dladdr1(address, &info, &entry, RTLD_DL_SYMENT) == 0) return 0;
  const auto* sym = static_cast<const ElfW(Sym)*>(entry);
  if (sym == nullptr || info.dli_saddr != address) return 0;
  return static_cast<std::size_t>(sym->st_size);
}

Result<void, plugin::LoadError> check_table(const BoundTable& table, const char* name,
                                            std::initializer_list<Slot> mandatory,
                                            std::initializer_list<Slot> optional) {
  if (name == nullptr) {
    return error(plugin::LoadErrorKind::NullSlot, table,
                 "has a NULL name; a net plugin table starts with its name (is this a table "
                 "of another layout?)");
  }
  for (const Slot& s : mandatory) {
    if (s.address == nullptr) {
      return error(plugin::LoadErrorKind::NullSlot, table,
                   std::string("has NULL mandatory slot ") + s.name +
                       "; the plugin cannot be used without it");
    }
  }
  for (const auto& list : {mandatory, optional}) {
    for (const Slot& s : list) {
      if (s.address != nullptr && !in_loaded_object(s.address)) {
        return error(plugin::LoadErrorKind::BadDescriptor, table,
                     std::string("slot ") + s.name +
                         " points into no loaded object; the table does not have the layout "
                         "its symbol name promises");
      }
    }
  }
  return {};
}

Result<void, plugin::LoadError> check_symbol_size(const BoundTable& table, Layout layout,
                                                  std::size_t expected, std::size_t other_layout) {
  const std::size_t size = symbol_size(table.table);
  if (size == 0 || size == expected) return {};  // 0: the object records no size
  const bool neuron = layout == Layout::kNeuron;
  const char* family = neuron ? "Neuron" : "NVIDIA";
  const char* other = neuron ? "NVIDIA" : "Neuron";
  std::string what = "is " + std::to_string(size) + " bytes, but a " + family + " " + table.symbol +
                     " table is " + std::to_string(expected) + " bytes; ";
  if (size == other_layout) {
    what += std::string("it has the size of the ") + other + " table of that name, which nccom " +
            "reads only with net.plugin_layout = \"" + (neuron ? "nvidia" : "neuron") +
            "\" (NCCOM_NET_PLUGIN_LAYOUT)";
  } else {
    what += "the plugin was built against another header";
  }
  return error(plugin::LoadErrorKind::AbiMismatch, table, what);
}

}  // namespace nccom::net
