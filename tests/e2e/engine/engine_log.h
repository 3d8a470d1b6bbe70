// The engine's own lines from the runtime log of this process (kangaRing
// lanes at init, the execution counts at close), which the drivers print
// for the tests as "engine=<line>".
#pragma once

#include <nrt_emu.h>

#include <string>
#include <vector>

inline std::vector<std::string> engine_log_lines() {
  std::string log(static_cast<size_t>(nrt_emu_log_snapshot(nullptr, 0)), '\0');
  nrt_emu_log_snapshot(log.data(), log.size() + 1);
  std::vector<std::string> out;
  for (size_t p = 0; p < log.size();) {
    size_t q = log.find('\n', p);
    if (q == std::string::npos) q = log.size();
    const std::string line = log.substr(p, q - p);
    if (line.find("kangaRing") != std::string::npos || line.find("closing:") != std::string::npos)
      out.push_back(line);
    p = q + 1;
  }
  return out;
}
