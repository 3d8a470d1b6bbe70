#include "env.h"

#include "runtime_log.h"

#include <cerrno>
#include <cstdlib>
#include <string>

namespace nrt_emu::env {

std::optional<std::string_view> get(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string_view(value);
}

std::optional<long> parse_int(std::string_view text, long lo, long hi) {
  const std::string copy(text);
  const char* begin = copy.c_str();
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(begin, &end, 10);
  if (end == begin || errno != 0) return std::nullopt;
  while (*end == ' ' || *end == '\t') ++end;
  if (*end != '\0' || value < lo || value > hi) return std::nullopt;
  return value;
}

std::optional<long> int_knob(const char* name, long fallback, long lo, long hi) {
  const auto text = get(name);
  if (!text) return fallback;
  const auto value = parse_int(*text, lo, hi);
  if (!value) {
    log::message(log::Level::Warn, "%s=%.*s is invalid: expected an integer in %ld..%ld", name,
                 static_cast<int>(text->size()), text->data(), lo, hi);
  }
  return value;
}

}  // namespace nrt_emu::env
