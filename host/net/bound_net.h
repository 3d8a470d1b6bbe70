// nccom::net::BoundNet — what every adapter shares: it owns the plugin's
// library when the host opened it (so the library outlives every call into
// it), and it answers for operations the plugin does not have.
//
// Adapters are objects, one per bound table, never file-level statics: two
// plugins of the same version can be loaded at once.
#pragma once

#include "net/net.h"
#include "plugin/shared_library.h"

#include <atomic>
#include <cstdint>
#include <memory>

namespace nccom::net {

// The operations of the Net interface, for messages.
enum class Op : unsigned {
  kInit,
  kFini,
  kDevices,
  kGetProperties,
  kListen,
  kConnect,
  kAccept,
  kRegMr,
  kRegMrDmaBuf,
  kDeregMr,
  kIsend,
  kIrecv,
  kIflush,
  kTest,
  kCloseSend,
  kCloseRecv,
  kCloseListen,
  kGetMrKey,
  kIwrite,
  kIwriteInline,
  kIread,
  kCount
};
// The slot name of the ABI tables: "regMrDmaBuf", "iread", ...
const char* op_name(Op op);

class BoundNet : public Net {
 protected:
  // `library` is null when the table lives in a library the host does not
  // own (the runtime's handle); it is then never closed here.
  BoundNet(PluginInfo info, unsigned capabilities, std::unique_ptr<plugin::SharedLibrary> library);

  // ncclInvalidUsage after one WARN per operation and object:
  // "<plugin> (<version>) has no <op>".
  ncclResult_t unsupported(Op op) const;

  // Refusals of arguments an older table cannot express (tags, n > 1, sizes
  // beyond int): returns `code` after one WARN per kind and object.
  enum class Refusal : unsigned { kTag, kMultiRecv, kIntSize, kCount };
  ncclResult_t refuse(Refusal kind, ncclResult_t code, const char* what) const;

  // fini of a table that has none: success, after one INFO saying why
  // nothing needs to be called.
  ncclResult_t no_fini(const char* why) const;

  // Calls `fn` when the slot is present, else unsupported(op). Optional
  // slots go through here, so no call site tests for NULL itself.
  template <class Fn, class... Args>
  ncclResult_t call(Op op, Fn* fn, Args... args) const {
    return fn != nullptr ? fn(args...) : unsupported(op);
  }

 private:
  bool first_time(unsigned bit) const;

  std::unique_ptr<plugin::SharedLibrary> library_;  // destroyed after the adapter's members
  mutable std::atomic<std::uint64_t> reported_{0};
};

}  // namespace nccom::net
