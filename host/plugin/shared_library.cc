// The one file in the tree that includes Boost.DLL. Only its non-throwing
// std::error_code forms are used.
//
// Boost.DLL turns a failed dlopen into a bare error_code and drops the
// loader's text. The text is what a user needs ("invalid ELF header",
// "undefined symbol: foo"), so it is recovered here: dlerror() is cleared
// before the load and read right after it on the same thread (glibc keeps the
// dlerror state per thread, and Boost makes no dl* call between the failed
// dlopen and its return unless the path names the executable itself). If no
// text is pending anyway, probe_dlopen_error() repeats the dlopen once, by
// hand, to obtain it.
#include "plugin/shared_library.h"

#include "plugin/elf_file.h"

#include <dlfcn.h>
#include <signal.h>

#include <boost/dll/shared_library.hpp>

#include <system_error>
#include <utility>

namespace nccom::plugin {

struct SharedLibrary::Impl {
  boost::dll::shared_library lib;
};

namespace {

std::string take_dlerror() {
  const char* text = dlerror();
  return text ? std::string(text) : std::string();
}

LoadError not_found(const std::filesystem::path& path) {
  return LoadError{LoadErrorKind::NotFound, path.string(),
                   path.string() + ": no such file; check the plugin path or search directories"};
}

LoadError dlopen_failed(const std::filesystem::path& path, const std::string& loader_text) {
  return LoadError{LoadErrorKind::DlopenFailed, path.string(),
                   path.string() + ": dlopen failed: " + loader_text +
                       "; rebuild the library for this platform or make its dependencies "
                       "resolvable (LD_LIBRARY_PATH)"};
}

// The process's signal dispositions across a load. libfabric, which net
// plugins link, pulls in libinfinipath, whose constructor takes SIGINT,
// SIGTERM, SIGSEGV, SIGBUS, SIGILL and SIGABRT with handlers that print a
// backtrace and exit from the handler: a launcher's SIGTERM then runs
// exit-time destructors under running threads, and a real crash leaves no
// core. Whatever a load changes is put back.
class SignalDispositions {
 public:
  SignalDispositions() {
    for (int sig = 1; sig < NSIG; ++sig) (void)sigaction(sig, nullptr, &before_[sig]);
  }
  ~SignalDispositions() {
    for (int sig = 1; sig < NSIG; ++sig) {
      struct sigaction now = {};
      if (sigaction(sig, nullptr, &now) != 0 || now.sa_handler == before_[sig].sa_handler) continue;
      (void)sigaction(sig, &before_[sig], nullptr);
    }
  }
  SignalDispositions(const SignalDispositions&) = delete;
  SignalDispositions& operator=(const SignalDispositions&) = delete;

 private:
  struct sigaction before_[NSIG] = {};
};

}  // namespace

namespace detail {

std::string probe_dlopen_error(const std::filesystem::path& path) {
  (void)dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle != nullptr) {
    // It loads now (it changed on disk meanwhile?); there is no error to report.
    dlclose(handle);
    return "the loader reported no error on a second attempt";
  }
  std::string text = take_dlerror();
  return text.empty() ? std::string("the loader gave no reason") : text;
}

}  // namespace detail

SharedLibrary::SharedLibrary(std::unique_ptr<Impl> impl, std::filesystem::path path)
    : impl_(std::move(impl)), path_(std::move(path)) {}
SharedLibrary::SharedLibrary(SharedLibrary&&) noexcept = default;
SharedLibrary& SharedLibrary::operator=(SharedLibrary&&) noexcept = default;
SharedLibrary::~SharedLibrary() = default;

Result<SharedLibrary, LoadError> SharedLibrary::open(const std::filesystem::path& path) {
  std::error_code status_ec;
  if (std::filesystem::status(path, status_ec).type() == std::filesystem::file_type::not_found)
    return not_found(path);
  // Any other status error (e.g. a permission problem on a parent
  // directory) is left to dlopen, whose message names it precisely.
  // A file the loader would map past its end (a truncated copy) would
  // raise SIGBUS inside dlopen: refuse it first.
  if (auto checked = check_elf_file(path); !checked) return checked.take_error();

  auto impl = std::make_unique<Impl>();
  std::error_code ec;
  (void)dlerror();  // drop any stale text so what follows is ours
  {
    const SignalDispositions kept;  // a plugin's libraries must not take the process's signals
    impl->lib.load(path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local, ec);
  }
  if (ec || !impl->lib.is_loaded()) {
    std::string text = take_dlerror();
    if (text.empty()) text = detail::probe_dlopen_error(path);
    return dlopen_failed(path, text);
  }
  return SharedLibrary(std::move(impl), path);
}

void* SharedLibrary::symbol(const char* name) const {
  if (!impl_ || name == nullptr || !impl_->lib.has(name)) return nullptr;
  // has() succeeded, so get() cannot fail; the catch only keeps this
  // function's no-throw promise independent of Boost's internals.
  try {
    return &impl_->lib.get<unsigned char>(name);
  } catch (...) {
    return nullptr;
  }
}

}  // namespace nccom::plugin
