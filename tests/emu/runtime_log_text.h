// The reference runtime's log ring as one string (nrt_emu_log_snapshot), for
// tests that look for the line a callback wrote.
#pragma once

#include <nrt_emu.h>

#include <string>

namespace nccom_test {

inline std::string runtime_log_text() {
  std::string text(static_cast<size_t>(nrt_emu_log_snapshot(nullptr, 0)), '\0');
  nrt_emu_log_snapshot(text.data(), text.size() + 1);
  return text;
}

}  // namespace nccom_test
