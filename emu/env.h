// Environment knobs of the reference runtime, read at call time (never at
// load time), so a test can change them between calls.
//
//   NEURON_RT_EMU_PLATFORM        emu | trn1 | trn1n | inf2 | trn2 | trn2-ultraserver | trn3 |
//                                 trn3-switch-v1 (default emu)
//   NEURON_RT_EMU_DEVICES         emulated devices, 1..16        (default 2; trn3-switch-v1: 16
//   only) NEURON_RT_EMU_TOTAL_VNC_COUNT nrt_get_total_vnc_count answer (default 0)
//   NEURON_RT_VIRTUAL_CORE_SIZE   vNC size, 1 or 2               (default 1; trn3-switch-v1: 2
//   only) NEURON_RT_LOG_LEVEL           ERROR|WARN|INFO|DEBUG|TRACE    (default WARN)
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
