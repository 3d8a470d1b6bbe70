// Internal to nccom_config: turning text into knob values and describing
// what was expected. Shared by the loader (environment, defaults, TOML) and
// the knob-table checks.
#pragma once

#include "config/config.h"
#include "config/knob.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nccom::config::detail {

// The outcome of checking a value: either a value, or the clause that
// completes "expected ..." (e.g. `an integer in 1..64`).
struct Checked {
  std::optional<Value> value;
  std::string expected;
};

// "a boolean", "an integer", "a string" — the TOML type a knob needs.
std::string type_noun(const Knob& knob);

// The full expectation, with range or allowed values: `an integer in 1..16`,
// `one of "", "AF_INET", "AF_INET6"`.
std::string expectation(const Knob& knob);

// Parses environment (or default) text. Booleans: 1/0, true/false, yes/no,
// on/off in any case; with kPresenceMeansTrue every other text is true.
// Integers: optional sign and decimal digits, nothing else.
Checked parse_text(const Knob& knob, std::string_view text);

// The items of a kNameList knob's text: '^' in front, the allowed names
// and the others, each trimmed, in the order written; empty items skipped.
struct NameList {
  bool inverted = false;
  std::vector<std::string> known;
  std::vector<std::string> unknown;
};
NameList split_names(const Knob& knob, std::string_view text);

// Range and allowed-value check of a value that already has the right type.
// Returns the value or the expectation it failed.
Checked check_value(const Knob& knob, Value value);

// Text of a value: strings verbatim, integers decimal, booleans true/false.
std::string value_text(const Value& value);

// `"text"` with backslash escapes for quotes, backslashes and control bytes.
std::string quote(std::string_view text);

// `"a", "b", "c"`.
std::string join_quoted(Names names);

// Levenshtein distance (insert, delete, substitute each cost 1).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word` within `max_distance`, or empty.
std::string_view closest(std::string_view word, const std::vector<std::string>& candidates,
                         std::size_t max_distance = 3);

bool iequals(std::string_view a, std::string_view b);

}  // namespace nccom::config::detail
