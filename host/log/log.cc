// The logger: process-wide level/mask/output, line formatting and the WARN
// sink. parse_settings and the file pattern live in settings.cc.
//
// Line formats (libnccom = NCCL's layout with CCOM in place of NCCL, and a
// UTC timestamp after the device, as Neuron's libnccom stamps its lines):
//   INFO     <host>:<pid>:<tid> [<dev>] <YYYY-MM-DD HH:MM:SS.uuuuuu> CCOM INFO <msg>
//   VERSION  <host>:<pid>:<tid> [<dev>] <stamp> CCOM INFO <msg>
//            (NCCL prints its "NCCL version ..." banner as an INFO-style line;
//            the banner is the only thing logged at Level::Version)
//   WARN     <host>:<pid>:<tid> [<dev>] <stamp> <file-basename>:<line> CCOM WARN <msg>
//            (without NCCL's leading blank line)
//   ABORT    printed exactly like WARN, including the "CCOM WARN" tag, and
//            filtered like WARN (shown whenever the level is >= WARN)
//   TRACE    <host>:<pid>:<tid> [<dev>] <stamp> <ms-since-configure, %f> <file-basename>:<line>
//            CCOM TRACE <msg>
// <stamp> is the wall clock (CLOCK_REALTIME) in UTC with microseconds. <dev>
// is the thread's device (set_thread_device), else the process's one device
// (note_process_device), else -1.
// Every line ends in exactly one '\n': trailing newlines of the message are
// collapsed. A message that does not fit kLineMax bytes ends in "...".
//
// Filtering: WARN/ABORT whenever the configured level >= WARN (the subsystem
// mask is not consulted); VERSION whenever the level >= VERSION; INFO/TRACE
// when the level >= theirs and (subsys & mask) != 0. Before configure() (and
// after reset()) only WARN/ABORT are printed, to stderr.
#include "log/log.h"

#include "log/guarded.h"
#include "log/log_internal.h"

#include <nccom/util/log.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>

namespace nccom::log {
namespace {

constexpr int kUnconfigured = -1;
constexpr int kNoDevice = -1;
constexpr int kSeveralDevices = -2;  // g_process_device: devices differ
// Longest line including its '\n' (the buffer also holds the terminating NUL).
constexpr std::size_t kLineMax = 4096;
// A timestamp's buffer: 26 characters for any year of four digits, room for more.
constexpr std::size_t kStampMax = 64;

// Hot-path state: read with relaxed loads by enabled().
std::atomic<int> g_level{kUnconfigured};
std::atomic<unsigned long> g_mask{kInit | kEnv | kBootstrap};
std::atomic<std::int64_t> g_start_ns{0};
std::atomic<WarnSink> g_warn_sink{nullptr};
std::atomic<int> g_process_device{kNoDevice};
thread_local int t_device = kNoDevice;
thread_local WarnObserver* t_observer = nullptr;  // set_thread_warn_observer

// Output: guarded by g_out_mutex. nullptr means unconfigured (stderr).
// std::mutex is constant-initialised, so none of this runs a static constructor.
std::mutex g_out_mutex;
std::FILE* g_out = nullptr;
bool g_out_owned = false;

std::int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int shown_device() {
  if (t_device >= 0) return t_device;
  const int process = g_process_device.load(std::memory_order_relaxed);
  return process >= 0 ? process : kNoDevice;
}

// "YYYY-MM-DD HH:MM:SS.uuuuuu" of now, UTC, into buf (kStampMax bytes).
void utc_stamp(char* buf, std::size_t size) {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  std::tm utc{};
  gmtime_r(&now.tv_sec, &utc);
  std::snprintf(buf, size, "%04d-%02d-%02d %02d:%02d:%02d.%06ld", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<long>(now.tv_nsec / 1000));
}

bool is_warn_like(Level level) { return level == Level::Warn || level == Level::Abort; }

const char* basename_of(const char* file) {
  if (file == nullptr) return "?";
  const char* slash = std::strrchr(file, '/');
  return slash ? slash + 1 : file;
}

std::string error_text(int err) {
  char buf[256];
  // GNU strerror_r: returns a pointer that may or may not be buf.
  return strerror_r(err, buf, sizeof(buf));
}

// Builds one whole line in buf (size kLineMax) and returns its length, '\n'
// included. The text before the '\n' is at most kLineMax - 2 bytes; the
// message (after the prefix) starts at *text_at.
std::size_t format_line(char* buf, Level level, const char* file, int line, const char* fmt,
                        va_list args, std::size_t* text_at) {
  constexpr std::size_t kTextMax = kLineMax - 2;
  const char* host = detail::short_hostname();
  const int pid = static_cast<int>(getpid());
  const long tid = static_cast<long>(syscall(SYS_gettid));
  const int dev = shown_device();
  char stamp[kStampMax];
  utc_stamp(stamp, sizeof stamp);

  int n;
  if (is_warn_like(level)) {
    n = std::snprintf(buf, kTextMax + 1, "%s:%d:%ld [%d] %s %s:%d CCOM WARN ", host, pid, tid, dev,
                      stamp, basename_of(file), line);
  } else if (level == Level::Trace) {
    const double elapsed_ms =
        static_cast<double>(steady_now_ns() - g_start_ns.load(std::memory_order_relaxed)) / 1e6;
    n = std::snprintf(buf, kTextMax + 1, "%s:%d:%ld [%d] %s %f %s:%d CCOM TRACE ", host, pid, tid,
                      dev, stamp, elapsed_ms, basename_of(file), line);
  } else {  // Info and Version
    n = std::snprintf(buf, kTextMax + 1, "%s:%d:%ld [%d] %s CCOM INFO ", host, pid, tid, dev,
                      stamp);
  }
  std::size_t len = n < 0 ? 0 : static_cast<std::size_t>(n);
  bool truncated = len > kTextMax;
  *text_at = truncated ? kTextMax : len;  // where the message starts (after the prefix)
  if (!truncated) {
    n = std::vsnprintf(buf + len, kTextMax + 1 - len, fmt, args);
    if (n > 0) {
      len += static_cast<std::size_t>(n);
      truncated = len > kTextMax;
    }
  }
  if (truncated) {
    len = kTextMax;
    std::memcpy(buf + len - 3, "...", 3);
  } else {
    while (len > 0 && buf[len - 1] == '\n') --len;
  }
  buf[len++] = '\n';
  buf[len] = '\0';
  return len;
}

void write_line(const char* line, std::size_t length) {
  std::lock_guard<std::mutex> lock(g_out_mutex);
  std::FILE* out = g_out ? g_out : stderr;
  std::fwrite(line, 1, length, out);
  std::fflush(out);
}

}  // namespace

bool enabled(Level level, unsigned long subsys) {
  const int current = g_level.load(std::memory_order_relaxed);
  switch (level) {
    case Level::Warn:
    case Level::Abort: return current == kUnconfigured || current >= static_cast<int>(Level::Warn);
    case Level::Version: return current >= static_cast<int>(Level::Version);
    case Level::Info:
    case Level::Trace:
      return current >= static_cast<int>(level) &&
             (subsys & g_mask.load(std::memory_order_relaxed)) != 0;
    default: return false;
  }
}

void vmessage(Level level, unsigned long subsys, const char* file, int line, const char* fmt,
              va_list args) {
  // WARN lines reach the sink (the runtime's log) whatever the level: the
  // runtime reports a failed call with the cause libnccom gave.
  const bool printed = enabled(level, subsys);
  WarnSink sink = is_warn_like(level) ? g_warn_sink.load(std::memory_order_acquire) : nullptr;
  WarnObserver* observer = is_warn_like(level) ? t_observer : nullptr;
  if (!printed && sink == nullptr && observer == nullptr) return;
  char buf[kLineMax];
  std::size_t text_at = 0;
  const std::size_t length = format_line(buf, level, file, line, fmt, args, &text_at);
  if (observer != nullptr) observer->warned(std::string_view(buf + text_at, length - 1 - text_at));
  if (printed) write_line(buf, length);
  if (sink != nullptr) {
    buf[length - 1] = '\0';  // the sink gets the line without its '\n'
    sink(buf, length - 1);
  }
}

void message(Level level, unsigned long subsys, const char* file, int line, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vmessage(level, subsys, file, line, fmt, args);
  va_end(args);
}

void sdk_log(nccom_log_level_t level, unsigned long subsys, const char* file, int line,
             const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vmessage(static_cast<Level>(level), subsys, file, line, fmt, args);
  va_end(args);
}

namespace {
// Whatever links this logger also routes the SDK's utility code through it.
// Runs during static initialisation; the SDK's logger slot is constant-
// initialised, so the order against other objects does not matter.
[[maybe_unused]] const bool kSdkLoggerInstalled = (::nccom::util::set_logger(&sdk_log), true);
}  // namespace

Status configure(const Settings& settings) {
  std::FILE* const stream = settings.stream == Stream::Stderr ? stderr : stdout;
  const char* const stream_name = settings.stream == Stream::Stderr ? "stderr" : "stdout";
  std::FILE* file = nullptr;
  Status status;
  if (!settings.file_pattern.empty()) {
    const std::string path = expand_file_pattern(settings.file_pattern);
    file = std::fopen(path.c_str(), "ae");  // append, close-on-exec
    if (file == nullptr) {
      status = make_error(NRT_INVALID, "NCCL_DEBUG_FILE: cannot open \"" + path +
                                           "\" for appending: " + error_text(errno) +
                                           "; logging to " + stream_name + " instead");
    } else {
      std::setvbuf(file, nullptr, _IOLBF, BUFSIZ);
    }
  }

  std::FILE* previous = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_out_mutex);
    if (g_out_owned) previous = g_out;
    g_out = file ? file : stream;
    g_out_owned = file != nullptr;
    g_start_ns.store(steady_now_ns(), std::memory_order_relaxed);
    g_mask.store(settings.subsys, std::memory_order_relaxed);
    g_level.store(static_cast<int>(settings.level), std::memory_order_relaxed);
  }
  // Safe outside the lock: writers fetch g_out under it and no longer see it.
  if (previous) std::fclose(previous);
  return status;
}

void reset() {
  std::FILE* previous = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_out_mutex);
    if (g_out_owned) previous = g_out;
    g_out = nullptr;
    g_out_owned = false;
    g_level.store(kUnconfigured, std::memory_order_relaxed);
    g_mask.store(Settings{}.subsys, std::memory_order_relaxed);
  }
  // reset() returns the logger to its just-loaded state, sink and devices included.
  g_process_device.store(kNoDevice, std::memory_order_relaxed);
  g_warn_sink.store(nullptr, std::memory_order_release);
  if (previous) std::fclose(previous);
}

void set_thread_device(int device) { t_device = device; }

WarnObserver* set_thread_warn_observer(WarnObserver* observer) {
  WarnObserver* previous = t_observer;
  t_observer = observer;
  return previous;
}

void note_process_device(int device) {
  if (device < 0) return;
  int current = g_process_device.load(std::memory_order_relaxed);
  while (current != device && current != kSeveralDevices) {
    const int next = current == kNoDevice ? device : kSeveralDevices;
    if (g_process_device.compare_exchange_weak(current, next, std::memory_order_relaxed)) return;
  }
}

void set_warn_sink(WarnSink sink) { g_warn_sink.store(sink, std::memory_order_release); }

}  // namespace nccom::log

namespace nccom::log {

void thread_stopped(const char* thread, const char* consequence, const std::exception* e,
                    bool out_of_memory) noexcept {
  try {
    NCCOM_WARN("%s thread stopped: %s (%s); %s", thread,
               out_of_memory ? "out of memory" : "internal error",
               e != nullptr ? e->what() : "an exception of unknown type", consequence);
  } catch (...) {
    // The line could not be written (memory is short).
  }
}

}  // namespace nccom::log
