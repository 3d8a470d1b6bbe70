// Environment knobs of the reference runtime, read at call time (never at
// load time), so a test can change them between calls. Every variable the
// runtime reads, with its values and default, is listed in knobs.cc (nccom-info
// prints that list).
#pragma once

#include <optional>
#include <string_view>

namespace nrt_emu::env {

// The variable's value, or nullopt when it is unset or empty.
std::optional<std::string_view> get(const char* name);

// A decimal integer in [lo, hi] (surrounding blanks allowed), else nullopt.
std::optional<long> parse_int(std::string_view text, long lo, long hi);

// Reads an integer knob: `fallback` when unset; nullopt (and one WARN line in
// the runtime log naming the variable and the allowed range) when invalid.
std::optional<long> int_knob(const char* name, long fallback, long lo, long hi);

}  // namespace nrt_emu::env
