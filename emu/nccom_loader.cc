#include "nccom_loader.h"

#include "runtime_log.h"

#include <dlfcn.h>
#include <signal.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace nrt_emu {
namespace {

constexpr const char* kNccomFile = "libnccom.so";
constexpr const char* kNetFile = "libnccom-net.so";
constexpr const char* kLibfabricFile = "libfabric.so.1";
constexpr const char* kNetNotTried =
    "libnccom-net.so has not been opened: the runtime opens it once libnccom is loaded";
constexpr const char* kNetSkipped = "libnccom-net.so was not opened: libnccom failed to load";

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char text[log::kMaxLineBytes];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(text, sizeof text, fmt, args);
  va_end(args);
  return text;
}

std::string dl_error_text() {
  const char* text = dlerror();
  return text != nullptr ? text : "unknown dl error";
}

const char* or_null(const std::string& s) { return s.empty() ? nullptr : s.c_str(); }

// dlopen searched from this library, as from an uninstrumented libnrt: its
// RUNPATH ($ORIGIN) applies. Under a sanitizer runtime the plain `dlopen`
// binds to the sanitizer's interceptor, which calls the C library's dlopen
// itself, so glibc would take the sanitizer's library as the caller and skip
// our RUNPATH. RTLD_NEXT from here reaches the C library's own dlopen (the
// sanitizer runtime is always loaded before us); without a sanitizer it is
// the same function plain `dlopen` binds to.
//
// The process's signal dispositions survive the load: libfabric pulls in
// libinfinipath, whose constructor installs handlers for SIGINT, SIGTERM,
// SIGSEGV, SIGBUS, SIGILL and SIGABRT that print a backtrace and exit from
// the handler — a launcher's SIGTERM then ran exit-time destructors under
// the proxy worker, which crashed (and a real crash left no core). Every
// disposition a load changes is put back and the change is logged.
void* dlopen_from_here(const char* file, int mode) {
  using DlopenFn = void* (*)(const char*, int);
  static const DlopenFn real = [] {
    auto next = reinterpret_cast<DlopenFn>(dlsym(RTLD_NEXT, "dlopen"));
    return next != nullptr ? next : &dlopen;
  }();
  struct sigaction before[NSIG] = {};
  for (int sig = 1; sig < NSIG; ++sig) (void)sigaction(sig, nullptr, &before[sig]);
  void* handle = real(file, mode);
  for (int sig = 1; sig < NSIG; ++sig) {
    struct sigaction now = {};
    if (sigaction(sig, nullptr, &now) != 0 || now.sa_handler == before[sig].sa_handler) continue;
    (void)sigaction(sig, &before[sig], nullptr);
    log::message(log::Level::Info,
                 "loading %s installed a handler for signal %d (%s); the process's "
                 "own disposition is restored",
                 file, sig, strsignal(sig));
  }
  return handle;
}

// The EFA-installer hint of step 7: is libfabric there, and which version?
std::string libfabric_hint() {
  // RTLD_NODELETE: libfabric's constructors allocate memory that only
  // process exit releases; unloading it after the probe would leak that.
  void* fabric = dlopen_from_here(kLibfabricFile, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (fabric == nullptr) {
    return format(
        "%s not found (%s): multi-node collectives need the EFA software; "
        "install it with the aws-efa-installer",
        kLibfabricFile, dl_error_text().c_str());
  }
  using FiVersion = uint32_t (*)(void);
  auto fi_version = reinterpret_cast<FiVersion>(dlsym(fabric, "fi_version"));
  std::string hint;
  if (fi_version == nullptr) {
    hint =
        format("%s is present but has no fi_version: reinstall the EFA software", kLibfabricFile);
  } else {
    const uint32_t v = fi_version();
    hint = format(
        "libfabric %u.%u is present (%s); libnccom-net.so is what is missing: nccom's own "
        "is built into the build tree's lib/ and installed beside libnccom.so by cmake "
        "--install; the Neuron SDK's comes with aws-neuronx-collectives",
        v >> 16, v & 0xffffu, kLibfabricFile);
  }
  dlclose(fabric);
  return hint;
}

}  // namespace

NccomLoader& NccomLoader::instance() {
  static NccomLoader* loader = new NccomLoader;  // never destroyed: no exit-time dlclose
  return *loader;
}

NRT_STATUS NccomLoader::load() {
  std::lock_guard lock(mutex_);
  if (attempted_) return status_;
  attempted_ = true;
  if (nccom::Status bad = log::check_level(); !bad) {
    status_ = fail(bad.error().message);
    std::lock_guard net_lock(net_mutex_);
    net_error_ = kNetSkipped;
    return status_;
  }
  status_ = load_nccom();
  if (status_ == NRT_SUCCESS) {
    open_net_plugin();
  } else {
    std::lock_guard net_lock(net_mutex_);
    net_error_ = kNetSkipped;
  }
  return status_;
}

void* NccomLoader::resolve(const char* name) {
  ++dlsym_count_;
  dlerror();  // clear a stale error so the one read after a NULL is ours
  return dlsym(nccom_, name);
}

NRT_STATUS NccomLoader::fail(std::string message) {
  log::message(log::Level::Warn, "%s", message.c_str());
  last_error_ = message;
  sticky_error_ = std::move(message);
  sticky_armed_ = true;
  return NRT_FAILURE;
}

// libnrt's ncclInit up to the 37 dlsyms. Holds mutex_.
NRT_STATUS NccomLoader::load_nccom() {
  nccom_ = dlopen_from_here(kNccomFile, RTLD_NOW);
  if (nccom_ == nullptr) {
    return fail(format("Error opening libnccom.so, cannot use collective operations! ... %s",
                       dl_error_text().c_str()));
  }

  auto get_version =
      reinterpret_cast<decltype(&neuronGetVersionInfo)>(resolve("neuronGetVersionInfo"));
  if (get_version == nullptr) {
    return fail("Get Version Info API is not implemented by aws-neuronx-collectives.");
  }
  Dl_info where{};
  if (dladdr(reinterpret_cast<void*>(get_version), &where) != 0 && where.dli_fname != nullptr) {
    path_ = where.dli_fname;
  }

  nec_version_info_t vi;
  std::memset(&vi, 0, sizeof vi);
  get_version(&vi, sizeof vi);  // libnrt ignores the return value: the struct is the answer
  version_ = vi;
  version_known_ = true;
  if (vi.compatibility_version != NCCOM_COMPATIBILITY_ID) {
    return fail(
        format("Incompatible version of aws-neuronx-collectives.  Compatibility id: %lu, "
               "expected: 89",
               static_cast<unsigned long>(vi.compatibility_version)));
  }
  log::message(log::Level::Info, "Using CCOM %lu.%lu.%lu.%lu-%.*s",
               static_cast<unsigned long>(vi.major), static_cast<unsigned long>(vi.minor),
               static_cast<unsigned long>(vi.patch), static_cast<unsigned long>(vi.maintenance),
               static_cast<int>(sizeof vi.git_hash), vi.git_hash);

  // Step 6: the other 36 in slot order; all or nothing.
  nccom_export_table_t table{};
  table.neuronGetVersionInfo = get_version;
  const char* missing = nullptr;
  std::string reason;
#define NRT_EMU_RESOLVE_SLOT(name)                                       \
  if (missing == nullptr && table.name == nullptr) {                     \
    table.name = reinterpret_cast<decltype(table.name)>(resolve(#name)); \
    if (table.name == nullptr) {                                         \
      missing = #name;                                                   \
      reason = dl_error_text();                                          \
    }                                                                    \
  }
  NCCOM_FOR_EACH_EXPORT(NRT_EMU_RESOLVE_SLOT)
#undef NRT_EMU_RESOLVE_SLOT
  if (missing != nullptr) {
    table_ = nccom_export_table_t{};  // all 37 slots, the resolved ones too
    return fail(format("cannot find symbol \"%s\" in NCCL. Reason: %s", missing, reason.c_str()));
  }
  table_ = table;
  table_valid_ = true;
  return NRT_SUCCESS;
}

// The net plugin, as ncclInit opens it: soft, never fatal. Holds mutex_.
void NccomLoader::open_net_plugin() {
  void* handle = dlopen_from_here(kNetFile, RTLD_NOW);
  std::string error;
  std::string hint;
  if (handle != nullptr) {
    log::message(log::Level::Info, "dlopened libnccom-net.so");
  } else {
    error = dl_error_text();
    hint = libfabric_hint();
    log::message(log::Level::Info,
                 "%s not loaded (not fatal: collectives stay on one node "
                 "or use the socket net): %s",
                 kNetFile, error.c_str());
    log::message(log::Level::Info, "%s", hint.c_str());
  }
  std::lock_guard net_lock(net_mutex_);
  net_ = handle;
  net_error_ = std::move(error);
  net_hint_ = std::move(hint);
}

void NccomLoader::unload() {
  std::lock_guard lock(mutex_);
  {
    std::lock_guard net_lock(net_mutex_);
    if (net_ != nullptr) dlclose(net_);
    net_ = nullptr;
    net_error_.clear();
    net_hint_.clear();
  }
  if (nccom_ != nullptr) dlclose(nccom_);
  nccom_ = nullptr;
  attempted_ = false;
  status_ = NRT_UNINITIALIZED;
  table_ = nccom_export_table_t{};
  table_valid_ = false;
  version_ = nec_version_info_t{};
  version_known_ = false;
  path_.clear();
  last_error_.clear();
  sticky_error_.clear();
  sticky_armed_ = false;
  dlsym_count_ = 0;
}

NRT_STATUS NccomLoader::install_for_test(const nccom_export_table_t* table) {
  if (table == nullptr) {
    unload();
    return NRT_SUCCESS;
  }
  std::lock_guard lock(mutex_);
  if (nccom_ != nullptr) {
    log::message(log::Level::Error,
                 "nrt_emu_debug_install_table: a real libnccom is loaded; unload it first");
    return NRT_INVALID;
  }
  attempted_ = true;
  status_ = NRT_SUCCESS;
  table_ = *table;
  table_valid_ = true;
  path_ = "(test table)";
  last_error_.clear();
  sticky_error_.clear();
  sticky_armed_ = false;
  return NRT_SUCCESS;
}

const nccom_export_table_t* NccomLoader::table() const {
  std::lock_guard lock(mutex_);
  return table_valid_ ? &table_ : nullptr;
}

const nec_version_info_t* NccomLoader::version() const {
  std::lock_guard lock(mutex_);
  return version_known_ ? &version_ : nullptr;
}

const char* NccomLoader::path() const {
  std::lock_guard lock(mutex_);
  return or_null(path_);
}

const char* NccomLoader::last_error() const {
  std::lock_guard lock(mutex_);
  return or_null(last_error_);
}

int NccomLoader::dlsym_count() const {
  std::lock_guard lock(mutex_);
  return dlsym_count_;
}

NRT_STATUS NccomLoader::guard() {
  std::lock_guard lock(mutex_);
  if (sticky_armed_) {
    log::message(log::Level::Warn, "NCCL init error: %s", sticky_error_.c_str());
    sticky_armed_ = false;
    return NRT_FAILURE;
  }
  return table_valid_ ? NRT_SUCCESS : NRT_UNINITIALIZED;
}

nccom::Result<void*> NccomLoader::net_plugin() const {
  std::lock_guard lock(net_mutex_);
  if (net_ == nullptr)
    return nccom::make_error(NRT_FAILURE, net_error_.empty() ? kNetNotTried : net_error_);
  return net_;
}

const char* NccomLoader::net_error() const {
  std::lock_guard lock(net_mutex_);
  if (net_ != nullptr) return nullptr;
  return net_error_.empty() ? kNetNotTried : net_error_.c_str();
}

const char* NccomLoader::net_hint() const {
  std::lock_guard lock(net_mutex_);
  return or_null(net_hint_);
}

}  // namespace nrt_emu
