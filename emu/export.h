// Visibility helper for the emu's exported functions.
//
// The emu is compiled with hidden visibility; a function leaves libnrt.so.1
// only if it is defined with NRT_EMU_API *and* named by libnrt.map (which
// also decides its version node: NRT_2.0.0 or NRT_EMU_1.0).
#pragma once

#define NRT_EMU_API extern "C" __attribute__((visibility("default")))
