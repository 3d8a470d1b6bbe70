// The reference runtime's environment variables, listed for nccom-info
// (nrt_emu_knob). The variables themselves are read where they act; this
// list says which exist, their values and defaults, and a test checks that
// every NEURON_RT_ variable the runtime reads is in it.
#include "nrt_emu.h"

#include <cstddef>

namespace {

struct Knob {
  const char* name;
  const char* values;
  const char* default_text;
};

constexpr Knob kKnobs[] = {
    {"NEURON_RT_EMU_PLATFORM",
     "emu, trn1, trn1n, inf2, trn2, trn2-ultraserver, trn3, trn3-switch-v1", "emu"},
    {"NEURON_RT_EMU_DEVICES", "1..16 (trn3-switch-v1: 16)", "2 (trn3-switch-v1: 16)"},
    {"NEURON_RT_EMU_TOTAL_VNC_COUNT", "0..4294967295 (0: libnccom's distributed bootstrap)", "0"},
    {"NEURON_RT_VIRTUAL_CORE_SIZE", "1, 2 (trn3-switch-v1: 2)", "1 (trn3-switch-v1: 2)"},
    {"NEURON_RT_LOG_LEVEL", "ERROR, WARN, INFO, DEBUG, TRACE", "WARN"},
    {"NEURON_RT_RANKS_PER_NETWORK_PROXY", "1..4096 ranks per proxy worker", "1"},
    {"NEURON_RT_ROOT_COMM_ID", "host:port where rank 0 listens", "(none)"},
    {"NEURON_RT_EMU_ALLREDUCE_RD_BYTES", "0..16 MiB: all-reduces up to it by recursive doubling",
     "65536 across hosts, 32768 on one host"},
    {"NEURON_RT_EMU_ALLGATHER_RD_BYTES",
     "0..16 MiB of output: all-gathers up to it by recursive doubling",
     "65536 across hosts; one host: 8192 for 2 ranks, 32768 for more"},
    {"NEURON_RT_EMU_DIRECT_READ", "0, 1: same-host slices of final data by reference", "1"},
    {"NEURON_RT_EMU_SPIN_US", "0..10000000 us an idle device loop yields before it sleeps", "20"},
    {"NEURON_RT_EMU_POLL_NS", "0..1000000 ns between yields in the spin window", "1000"},
    {"NEURON_RT_EMU_PROXY_HELP", "0, 1: the device loop steps the proxy's tasks", "1"},
    {"NEURON_RT_EMU_SLICE_BYTES", "4096..16 MiB: the engine's slot size", "524288"},
    {"NEURON_RT_EMU_ENGINE_CHANNELS", "1..4 ring channels the engine uses at most", "4"},
    {"NEURON_RT_EMU_DEBUG_KILL_AFTER_INIT",
     "a rank number: that rank kills itself in nrt_emu_ccom_init (test seam)", "-1 (none)"},
};

}  // namespace

extern "C" NRT_EMU_PUBLIC int nrt_emu_knob(int index, const char** name, const char** values,
                                           const char** default_text) {
  if (index < 0 || static_cast<std::size_t>(index) >= sizeof kKnobs / sizeof kKnobs[0]) return 0;
  const Knob& k = kKnobs[index];
  if (name != nullptr) *name = k.name;
  if (values != nullptr) *values = k.values;
  if (default_text != nullptr) *default_text = k.default_text;
  return 1;
}
