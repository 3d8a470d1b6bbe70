// nccom logging: libnccom's line format (NCCL's layout with CCOM and a UTC
// timestamp), NCCL_DEBUG levels, NCCL_DEBUG_SUBSYS masks, NCCL_DEBUG_FILE
// with %h/%p, and the stream lines go to without a file (log.stream).
//
// The logger is configured once by the host context from the configuration
// (it never reads the environment itself). Until configured it prints only
// WARN lines to stderr, so early failures are never silent.
#pragma once

#include <nccom/plugin.h>
#include <nccom/util/result.h>

#include <cstdarg>
#include <cstdint>
#include <string>
#include <string_view>

namespace nccom::log {

// Numeric values are the ncclDebugLogLevel of the net-plugin ABI.
enum class Level : int { None = 0, Version = 1, Warn = 2, Info = 3, Abort = 4, Trace = 5 };

// Subsystem bits, as NCCL_DEBUG_SUBSYS and ncclDebugLogSubSys.
enum Subsys : unsigned long {
  kInit = 1,
  kColl = 2,
  kP2P = 4,
  kShm = 8,
  kNet = 16,
  kGraph = 32,
  kTuning = 64,
  kEnv = 128,
  kAlloc = 256,
  kCall = 512,
  kProxy = 1024,
  kNvls = 2048,
  kBootstrap = 4096,
  kReg = 8192,
  kAll = ~0ul
};

// Where lines go when no debug file is named (or it cannot be opened).
enum class Stream { Stdout, Stderr };

struct Settings {
  Level level = Level::None;
  unsigned long subsys = kInit | kEnv | kBootstrap;  // NCCL's default mask
  std::string file_pattern;                          // empty: `stream`
  Stream stream = Stream::Stdout;                    // stdout as NCCL; tools choose stderr
};

// Parses NCCL_DEBUG / NCCL_DEBUG_SUBSYS / NCCL_DEBUG_FILE / log.stream
// values. Level and stream names are case-insensitive; an empty level means
// None, an empty stream stdout. Subsys is a comma list, "^" in front inverts
// it. Unknown names are errors that list the valid ones.
Result<Settings> parse_settings(std::string_view level, std::string_view subsys,
                                std::string_view file_pattern, std::string_view stream = "");

// Expands %h (hostname) and %p (pid) in an NCCL_DEBUG_FILE pattern.
std::string expand_file_pattern(std::string_view pattern);

// Installs settings (opens the debug file). Thread-safe; may be called again.
Status configure(const Settings& settings);

// Restores the unconfigured state (WARN to stderr) and closes the debug file.
void reset();

// Device shown in brackets on this thread's lines ("[%d]"); -1 if none.
void set_thread_device(int device);

// Records a device this process's communicators use. A thread without a
// device of its own (proxy, health, plugin threads, calls made before its
// first communicator) shows the process's device when every device recorded
// so far is the same one, else -1. reset() forgets them.
void note_process_device(int device);

// A sink that also receives every WARN line (the host installs the runtime's
// nec_ndl_printk here). Called without the logger's lock held.
using WarnSink = void (*)(const char* line, std::size_t length);
void set_warn_sink(WarnSink sink);

bool enabled(Level level, unsigned long subsys);

// Told the text (after "CCOM WARN ") of every WARN line this thread gives
// out while it is installed: an entry point learns what its call already
// said, so that it says why it failed once (abi::CallScope).
class WarnObserver {
 public:
  virtual void warned(std::string_view text) noexcept = 0;

 protected:
  ~WarnObserver() = default;
};
// Installs `observer` for this thread (nullptr: none); returns the one it replaces.
WarnObserver* set_thread_warn_observer(WarnObserver* observer);

// printf-style entry point. Same shape as ncclDebugLogger_t so it can be
// handed to net plugins directly.
void message(Level level, unsigned long subsys, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 5, 6)));
void vmessage(Level level, unsigned long subsys, const char* file, int line, const char* fmt,
              va_list args) __attribute__((format(printf, 5, 0)));

// The same entry with the SDK's types: the nccom_log_fn handed to plugins
// (nccom_host_api_t::log) and installed as this object's SDK logger
// (nccom/util/log.h), so the SDK's utility libraries linked into the host
// log here.
void sdk_log(nccom_log_level_t level, unsigned long subsys, const char* file, int line,
             const char* fmt, ...) __attribute__((format(printf, 5, 6)));

}  // namespace nccom::log

#define NCCOM_WARN(...)                                                                    \
  ::nccom::log::message(::nccom::log::Level::Warn, ::nccom::log::kAll, __FILE__, __LINE__, \
                        __VA_ARGS__)
#define NCCOM_INFO(subsys, ...)                                                                    \
  do {                                                                                             \
    if (::nccom::log::enabled(::nccom::log::Level::Info, (subsys)))                                \
      ::nccom::log::message(::nccom::log::Level::Info, (subsys), __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)
#define NCCOM_TRACE(subsys, ...)                                                      \
  do {                                                                                \
    if (::nccom::log::enabled(::nccom::log::Level::Trace, (subsys)))                  \
      ::nccom::log::message(::nccom::log::Level::Trace, (subsys), __FILE__, __LINE__, \
                            __VA_ARGS__);                                             \
  } while (0)
