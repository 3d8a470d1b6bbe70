#include "runtime_log.h"

#include "knobs.h"

#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>

namespace nrt_emu::log {
namespace {

// libnccom's forwarded lines are also kept apart, numbered and tagged with
// the forwarding thread, so that a failed call can name its cause.
struct Forwarded {
  uint64_t number = 0;
  pid_t thread = 0;
  std::string text;
};
inline constexpr std::size_t kForwardedKept = 64;

struct Ring {
  std::mutex mutex;
  std::deque<std::string> lines;
  std::deque<Forwarded> forwarded;
  // Written under `mutex`; read without it by mark(), which every engine
  // call and proxy task takes.
  std::atomic<uint64_t> forwarded_n{0};
};

Ring& ring() {
  static Ring* instance = new Ring;  // never destroyed: usable from atexit code
  return *instance;
}

const char* level_name(Level level) {
  switch (level) {
    case Level::Error: return "ERROR";
    case Level::Warn: return "WARN";
    case Level::Info: return "INFO";
    case Level::Debug: return "DEBUG";
    case Level::Trace: return "TRACE";
  }
  return "?";
}

struct Name {
  const char* name;
  Level level;
};
constexpr Name kNames[] = {{"ERROR", Level::Error},  {"WARN", Level::Warn},
                           {"WARNING", Level::Warn}, {"INFO", Level::Info},
                           {"DEBUG", Level::Debug},  {"TRACE", Level::Trace}};

// NEURON_RT_LOG_LEVEL's level; nullptr when it names none.
const Name* named_level(const std::string& value) {
  for (const Name& n : kNames) {
    if (strcasecmp(value.c_str(), n.name) == 0) return &n;
  }
  return nullptr;
}

// NEURON_RT_LOG_LEVEL, read on every line so tests and tools can change it.
// An invalid value keeps WARN here; check_level() reports it.
Level threshold() {
  const auto text = knobs::text(knobs::Var::kLogLevel);
  if (!text) return Level::Warn;
  const Name* n = named_level(std::string(*text));
  return n != nullptr ? n->level : Level::Warn;
}

void append(std::string line) {
  if (line.size() > kMaxLineBytes) line.resize(kMaxLineBytes);
  Ring& r = ring();
  std::lock_guard lock(r.mutex);
  if (r.lines.size() == kCapacity) r.lines.pop_front();
  r.lines.push_back(std::move(line));
}

pid_t this_thread() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

void remember(const std::string& line) {
  Ring& r = ring();
  std::lock_guard lock(r.mutex);
  if (r.forwarded.size() == kForwardedKept) r.forwarded.pop_front();
  const uint64_t number = r.forwarded_n.load(std::memory_order_relaxed) + 1;
  r.forwarded.push_back(Forwarded{number, this_thread(), line.substr(0, kMaxLineBytes)});
  r.forwarded_n.store(number, std::memory_order_release);
}

// "host:pid:tid [dev] YYYY-MM-DD HH:MM:SS.uuuuuu file:line CCOM WARN text" -> "text".
std::string message_part(const std::string& line) {
  for (const char* tag : {" CCOM WARN ", " CCOM ABORT ", " NCCL WARN "}) {
    if (const std::size_t at = line.find(tag); at != std::string::npos)
      return line.substr(at + std::strlen(tag));
  }
  return line;
}

}  // namespace

void message(Level level, const char* fmt, ...) {
  char text[kMaxLineBytes];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(text, sizeof text, fmt, args);
  va_end(args);

  append(std::string("[nrt] ") + level_name(level) + ": " + text);
  if (static_cast<int>(level) <= static_cast<int>(threshold())) {
    std::fprintf(stderr, "nrt-emu %s: %s\n", level_name(level), text);
  }
}

void nccom_text(const char* text, std::size_t size, uint32_t action) {
  if (text == nullptr) return;
  const std::size_t length = strnlen(text, size);
  const bool echo = static_cast<int>(threshold()) >= static_cast<int>(Level::Info);
  const std::string prefix = "[nccom] action=" + std::to_string(action) + ": ";
  std::size_t start = 0;
  while (start < length) {
    const char* newline = static_cast<const char*>(std::memchr(text + start, '\n', length - start));
    const std::size_t end = newline != nullptr ? static_cast<std::size_t>(newline - text) : length;
    const std::string piece(text + start, end - start);
    append(prefix + piece);
    remember(piece);
    if (echo) std::fprintf(stderr, "nrt-emu nccom: %s\n", piece.c_str());
    start = end + 1;
  }
}

std::size_t snapshot(char* buf, std::size_t len) {
  Ring& r = ring();
  std::lock_guard lock(r.mutex);
  std::size_t needed = 0;
  for (const std::string& line : r.lines) {
    const std::size_t room = len > needed + 1 ? len - needed - 1 : 0;
    const std::size_t n = std::min(room, line.size());
    if (n > 0) std::memcpy(buf + needed, line.data(), n);
    if (room > line.size()) buf[needed + line.size()] = '\n';
    needed += line.size() + 1;
  }
  if (len > 0) buf[std::min(needed, len - 1)] = '\0';
  return needed;
}

void clear() {
  Ring& r = ring();
  std::lock_guard lock(r.mutex);
  r.lines.clear();
  r.forwarded.clear();
}

nccom::Status check_level() {
  const auto text = knobs::text(knobs::Var::kLogLevel);
  if (!text || named_level(std::string(*text)) != nullptr) return {};
  return nccom::make_error(
      NRT_INVALID, "NEURON_RT_LOG_LEVEL=\"" + std::string(text->substr(0, 64)) +
                       "\" is not a log level: use ERROR, WARN (or WARNING), INFO, DEBUG or "
                       "TRACE, in any letter case, or unset it for WARN");
}

uint64_t mark() { return ring().forwarded_n.load(std::memory_order_acquire); }

std::string nccom_cause(uint64_t since) {
  Ring& r = ring();
  const pid_t me = this_thread();
  std::lock_guard lock(r.mutex);
  const Forwarded* any = nullptr;
  for (auto it = r.forwarded.rbegin(); it != r.forwarded.rend() && it->number > since; ++it) {
    if (it->thread == me) return message_part(it->text);
    if (any == nullptr) any = &*it;
  }
  return any != nullptr ? message_part(any->text) : std::string();
}

}  // namespace nrt_emu::log
