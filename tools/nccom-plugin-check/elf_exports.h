// Which plugin entry symbols a shared object exports, read from its dynamic
// symbol table (.dynsym) without loading it — so a file the dynamic loader
// refuses can still be described — with the size each symbol records.
#pragma once

#include "outcome.h"

#include <cstddef>
#include <string>
#include <vector>

namespace nccom::plugin_check {

struct ExportedSymbol {
  std::string name;
  bool present = false;  // defined, global or weak, default or protected visibility
  std::size_t size = 0;  // st_size
};

// One entry per name in `names`, in that order. Fails for a file that is not
// a 64-bit ELF shared object of this machine's byte order.
Expected<std::vector<ExportedSymbol>> read_exports(const std::string& path,
                                                   const std::vector<std::string>& names);

}  // namespace nccom::plugin_check
