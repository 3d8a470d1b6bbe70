// nccom::config::Knob — one configuration setting, declared once.
//
// A component declares its knobs in one constant table (TOML key, environment
// overrides, type, default, help) and hands the table to config::load(); the
// same table drives validation, the shipped nccom.toml test and
// `nccom-config`. Tables hold only string_views into static storage:
// they must outlive every Config built from them.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string_view>

namespace nccom::config {

enum class Type {
  Bool,    // TOML boolean; env 1/0, true/false, yes/no, on/off
  Int,     // TOML integer; env decimal; checked against [min, max]
  String,  // TOML string; any text
  Enum,    // TOML string; one of `allowed`
};

// Behaviour flags of a knob (bit set).
enum KnobFlag : unsigned {
  kNoFlags = 0,
  // Enum values compare case-insensitively ("info" == "INFO"); the text is
  // kept verbatim and the consumer parses it.
  kCaseInsensitive = 1u << 0,
  // Bool only, environment only: NCCL's "set means on". Any non-empty value
  // other than 0/false/no/off turns the knob on.
  kPresenceMeansTrue = 1u << 1,
  // String only: a comma-separated list of `allowed` names (blanks around a
  // name and empty items are ignored), optionally led by '^' (NCCL's "all
  // but these"). With kCaseInsensitive the names match in any case.
  kNameList = 1u << 2,
  // Environment only: a bad value from an environment variable is not an
  // error. The variable is ignored (the file or the default decides) and the
  // Config records what was ignored (Config::env_fallbacks()); for a
  // kNameList knob only the unknown names are dropped. NCCL's debug
  // variables work this way: a job never dies over how it logs. A bad value
  // in the file stays an error.
  kEnvFallsBack = 1u << 3,
  // The value names this job (where its ranks meet, its secret), not how it
  // behaves: config::digest leaves it out, so two runs of one configuration
  // compare equal, and a secret never enters a published hash.
  kJobIdentity = 1u << 4,
};

using Names = std::span<const std::string_view>;

struct Knob {
  std::string_view key{};  // dotted TOML path, e.g. "net.socket.nthreads"
  Names env{};             // overrides; the first one set (non-empty) wins
  Type type = Type::String;
  std::string_view default_text{};                              // parsed like an environment value
  std::string_view help{};                                      // one or more real sentences
  std::int64_t min = std::numeric_limits<std::int64_t>::min();  // Int only
  std::int64_t max = std::numeric_limits<std::int64_t>::max();  // Int only
  Names allowed{};                                              // Enum only
  unsigned flags = kNoFlags;                                    // KnobFlag bits
};

using KnobTable = std::span<const Knob>;

// The host's own knobs (log, bootstrap, net, plugins, topology); knobs.cc.
KnobTable host_knobs();

}  // namespace nccom::config
