// nccom::plugin::LoadError — why a shared object could not be used as a plugin.
//
// Every kind is distinct so a caller (and a test) can tell a typo in a plugin
// list from a broken build from an ABI skew. The message is complete on its
// own: what failed, which file, what to do. The host logs it once as WARN and
// skips that plugin.
#pragma once

#include <nccom/util/result.h>

#include <string>

namespace nccom::plugin {

enum class LoadErrorKind {
  NotFound,          // no such file, or not found in any search directory
  InvalidFile,       // not a loadable ELF64 shared object: not a regular file, not ELF,
                     // another class or machine, truncated (checked before dlopen)
  DlopenFailed,      // the dynamic loader refused it; message carries dlerror()
  MissingSymbol,     // loaded, but exports no nccom_plugin descriptor
  AbiMismatch,       // descriptor abi_version is not one this host supports
  BadDescriptor,     // struct_size too small, unknown kind, or the wrong kind
  NullSlot,          // a mandatory field or vtable slot is NULL
  InitFailed,        // the plugin's init returned non-OK
  DuplicateName,     // another plugin of the same kind already has this name
  BadConfiguration,  // its knob table, or a value set for one of its knobs, is invalid
};

struct LoadError {
  LoadErrorKind kind = LoadErrorKind::NotFound;
  std::string path;     // the file concerned, or the name that was looked up
  std::string message;  // complete, human-readable; includes `path`
};

// "NotFound", "DlopenFailed", ... (stable; for logs and test output).
const char* to_string(LoadErrorKind kind);

}  // namespace nccom::plugin
