#include "runtime_log.h"

#include "env.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <strings.h>

namespace nrt_emu::log {
namespace {

struct Ring {
  std::mutex mutex;
  std::deque<std::string> lines;
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

// NEURON_RT_LOG_LEVEL, read on every line so tests and tools can change it.
Level threshold() {
  const auto text = env::get("NEURON_RT_LOG_LEVEL");
  if (!text) return Level::Warn;
  const std::string value(*text);
  struct Name { const char* name; Level level; };
  static constexpr Name kNames[] = {{"ERROR", Level::Error}, {"WARN", Level::Warn},
                                    {"WARNING", Level::Warn}, {"INFO", Level::Info},
                                    {"DEBUG", Level::Debug}, {"TRACE", Level::Trace}};
  for (const Name& n : kNames) {
    if (strcasecmp(value.c_str(), n.name) == 0) return n.level;
  }
  return Level::Warn;
}

void append(std::string line) {
  if (line.size() > kMaxLineBytes) line.resize(kMaxLineBytes);
  Ring& r = ring();
  std::lock_guard lock(r.mutex);
  if (r.lines.size() == kCapacity) r.lines.pop_front();
  r.lines.push_back(std::move(line));
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
}

}  // namespace nrt_emu::log
