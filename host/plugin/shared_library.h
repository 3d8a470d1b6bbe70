// nccom::plugin::SharedLibrary — one dlopen'ed shared object, RAII.
//
// Generic: it knows nothing about nccom descriptors, so the net-plugin
// loader uses it for ncclNetPlugin_v6/v5/v4 objects as well. This is the
// only place in the tree that includes Boost.DLL (shared_library.cc); the
// header stays free of it.
#pragma once

#include "plugin/load_error.h"

#include <filesystem>
#include <memory>
#include <string>

namespace nccom::plugin {

class SharedLibrary {
 public:
  // Opens `path` with RTLD_NOW | RTLD_LOCAL, so a missing dependency or an
  // unresolvable symbol is reported here rather than at first call.
  // Errors: NotFound when the file does not exist; InvalidFile when it is
  // not a shared object this process can map (check_elf_file, elf_file.h:
  // not a regular file, not ELF64 for this machine, truncated), found
  // before dlopen so that the loader never touches bytes past the end of
  // the file; DlopenFailed (with the loader's own text, e.g. "undefined
  // symbol: x") when the loader refuses it. Never throws.
  static Result<SharedLibrary, LoadError> open(const std::filesystem::path& path);

  SharedLibrary(SharedLibrary&&) noexcept;
  SharedLibrary& operator=(SharedLibrary&&) noexcept;
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;
  ~SharedLibrary();  // closes the library; nothing from it may be used after

  // Address of the exported symbol `name`, or nullptr when it is absent
  // (or when this object was moved from). Never throws.
  void* symbol(const char* name) const;

  // The path the library was opened from, as given to open().
  const std::filesystem::path& path() const { return path_; }

 private:
  struct Impl;
  SharedLibrary(std::unique_ptr<Impl> impl, std::filesystem::path path);

  std::unique_ptr<Impl> impl_;
  std::filesystem::path path_;
};

namespace detail {
// Opens `path` once more with plain dlopen(RTLD_NOW | RTLD_LOCAL) only to
// obtain the loader's message; closes it again should it unexpectedly load.
// Used when the text was not available right after the failed load. Exposed
// for tests.
std::string probe_dlopen_error(const std::filesystem::path& path);
}  // namespace detail

}  // namespace nccom::plugin
