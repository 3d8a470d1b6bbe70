// libfabric stays loaded once this plugin has been loaded.
//
// libfabric.so.1 and the libraries its providers link (libpsm2,
// libinfinipath, libibverbs, librdmacm, libefa, libnl) allocate during their
// own initialisation and free none of it when they are unloaded; libinfinipath
// also installs signal handlers that point into its code. A runtime that
// dlcloses this plugin (the reference runtime does, on nrt_emu_unload_nccom;
// nccom's plugin host does at fini) would unload them with it: their memory
// leaks and a later signal could jump into an unmapped handler. So when this
// plugin is loaded it marks the libfabric it was linked against as never to be
// unloaded (RTLD_NODELETE on the already-loaded library); this plugin itself
// still unloads, so a reload starts from fresh state.
#include <dlfcn.h>

#include <rdma/fabric.h>

namespace {

__attribute__((constructor)) void pin_libfabric() {
  Dl_info where{};
  if (dladdr(reinterpret_cast<void*>(&fi_version), &where) == 0 || where.dli_fname == nullptr)
    return;
  // The handle is kept on purpose: it is the reference that pins the library.
  (void)dlopen(where.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

}  // namespace
