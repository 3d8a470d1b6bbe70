// nccom/util/knob_value.h — a plugin's knobs (nccom/knob.h) read through the
// host API as typed values.
//
// The host hands every value as text: integers in decimal, booleans as
// "true"/"false", strings as written. It has already checked each one against
// the knob's declaration; these reads are strict all the same, so a plugin
// driven by another host (or a test) refuses what it cannot take instead of
// guessing. Header-only C++; part of nccom::sdk.
#pragma once

#include <nccom/plugin.h>

#include <strings.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace nccom::util {

// The text the host answers for `key`, or nullptr: no host API, no
// config_get, or no such setting.
inline const char* knob_text(const nccom_host_api_t* host, const char* key) {
  if (host == nullptr || host->struct_size < sizeof(nccom_host_api_t) ||
      host->config_get == nullptr)
    return nullptr;
  return host->config_get(host->host_ctx, key);
}

// A decimal int. Absent or empty: `fallback`. False (and `out` untouched)
// when the text is not an int.
inline bool knob_int(const nccom_host_api_t* host, const char* key, int fallback, int& out) {
  const char* text = knob_text(host, key);
  if (text == nullptr || *text == '\0') {
    out = fallback;
    return true;
  }
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < INT_MIN || value > INT_MAX) return false;
  out = static_cast<int>(value);
  return true;
}

// "true"/"false" (any case) or "1"/"0". Absent or empty: `fallback`. False
// (and `out` untouched) for any other text.
inline bool knob_bool(const nccom_host_api_t* host, const char* key, bool fallback, bool& out) {
  const char* text = knob_text(host, key);
  if (text == nullptr || *text == '\0') {
    out = fallback;
    return true;
  }
  if (strcasecmp(text, "true") == 0 || std::strcmp(text, "1") == 0) {
    out = true;
    return true;
  }
  if (strcasecmp(text, "false") == 0 || std::strcmp(text, "0") == 0) {
    out = false;
    return true;
  }
  return false;
}

}  // namespace nccom::util
