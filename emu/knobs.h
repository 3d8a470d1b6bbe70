// The reference runtime's environment variables: one declared table (name,
// integer range or values, default, for nccom-info) and one reader. A
// variable is read when it acts (never at load time), so a test may change
// it between calls; an empty value counts as unset, as NCCL's parameters do.
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nrt_emu::knobs {

enum class Var {
  kPlatform,
  kDevices,
  kTotalVncCount,
  kVirtualCoreSize,
  kLogLevel,
  kRanksPerProxy,
  kRootCommId,
  kAllreduceRdBytes,
  kAllgatherRdBytes,
  kDirectRead,
  kSpinUs,
  kPollNs,
  kProxyHelp,
  kSliceBytes,
  kEngineChannels,
  kDebugKillAfterInit,
};

struct Declared {
  Var var;
  const char* name;
  bool integer;        // false: a text, its values in `values`
  long long lo, hi;    // an integer's range
  const char* values;  // for people: the values and what they mean
  const char* default_text;
};

inline constexpr long long kMaxBytes = 16ll << 20;

// In Var's order (declared() indexes it), as nccom-info lists them.
inline constexpr Declared kTable[] = {
    {Var::kPlatform, "NEURON_RT_EMU_PLATFORM", false, 0, 0,
     "emu, trn1, trn1n, inf2, trn2, trn2-ultraserver, trn3, trn3-switch-v1", "emu"},
    {Var::kDevices, "NEURON_RT_EMU_DEVICES", true, 1, 16, "1..16 (trn3-switch-v1: 16)",
     "2 (trn3-switch-v1: 16)"},
    {Var::kTotalVncCount, "NEURON_RT_EMU_TOTAL_VNC_COUNT", true, 0, UINT32_MAX,
     "0..4294967295 (0: libnccom's distributed bootstrap)", "0"},
    {Var::kVirtualCoreSize, "NEURON_RT_VIRTUAL_CORE_SIZE", true, 1, 2, "1, 2 (trn3-switch-v1: 2)",
     "1 (trn3-switch-v1: 2)"},
    {Var::kLogLevel, "NEURON_RT_LOG_LEVEL", false, 0, 0, "ERROR, WARN, INFO, DEBUG, TRACE", "WARN"},
    {Var::kRanksPerProxy, "NEURON_RT_RANKS_PER_NETWORK_PROXY", true, 1, 4096,
     "1..4096 ranks per proxy worker", "1"},
    {Var::kRootCommId, "NEURON_RT_ROOT_COMM_ID", false, 0, 0, "host:port where rank 0 listens",
     "(none)"},
    {Var::kAllreduceRdBytes, "NEURON_RT_EMU_ALLREDUCE_RD_BYTES", true, 0, kMaxBytes,
     "0..16 MiB: all-reduces up to it by recursive doubling",
     "65536 across hosts, 32768 on one host"},
    {Var::kAllgatherRdBytes, "NEURON_RT_EMU_ALLGATHER_RD_BYTES", true, 0, kMaxBytes,
     "0..16 MiB of output: all-gathers up to it by recursive doubling",
     "65536 across hosts; one host: 8192 for 2 ranks, 32768 for more"},
    {Var::kDirectRead, "NEURON_RT_EMU_DIRECT_READ", true, 0, 1,
     "0, 1: same-host slices of final data by reference", "1"},
    {Var::kSpinUs, "NEURON_RT_EMU_SPIN_US", true, 0, 10000000,
     "0..10000000 us an idle device loop yields before it sleeps", "20"},
    {Var::kPollNs, "NEURON_RT_EMU_POLL_NS", true, 0, 1000000,
     "0..1000000 ns between yields in the spin window", "1000"},
    {Var::kProxyHelp, "NEURON_RT_EMU_PROXY_HELP", true, 0, 1,
     "0, 1: the device loop steps the proxy's tasks", "1"},
    {Var::kSliceBytes, "NEURON_RT_EMU_SLICE_BYTES", true, 4096, kMaxBytes,
     "4096..16 MiB: the engine's slot size", "524288"},
    {Var::kEngineChannels, "NEURON_RT_EMU_ENGINE_CHANNELS", true, 1, 4,
     "1..4 ring channels the engine uses at most", "4"},
    {Var::kDebugKillAfterInit, "NEURON_RT_EMU_DEBUG_KILL_AFTER_INIT", true, -1, INT32_MAX,
     "a rank number: that rank kills itself in nrt_emu_ccom_init (test seam)", "-1 (none)"},
};
std::size_t count();
const Declared& at(std::size_t index);
constexpr const Declared& declared(Var v) { return kTable[static_cast<std::size_t>(v)]; }

// The text a variable holds; nullopt when unset or empty.
std::optional<std::string_view> text(Var v);

// An integer variable: its value; when unset, this process's own default
// (set_process_default), else `fallback`; nullopt with `why` ("NAME=VALUE is
// not an integer in LO..HI") when the value is not an integer in its range.
std::optional<long long> integer(Var v, long long fallback, std::string& why);

// integer(), with a bad value said in one WARN line of the runtime log.
std::optional<long long> integer_or_warn(Var v, long long fallback);

// Whether the environment sets the variable or this process set its own
// default for it.
bool is_set(Var v);

// A default this process decided (a rank's device count once its
// communicator's placement is known), used while the environment does not
// set the variable. It stays in this process: children do not inherit it.
void set_process_default(Var v, long long value);

}  // namespace nrt_emu::knobs
