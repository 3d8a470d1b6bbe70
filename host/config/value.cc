#include "config/value.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <limits>

namespace nccom::config::detail {
namespace {

constexpr std::int64_t kNoMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kNoMax = std::numeric_limits<std::int64_t>::max();

constexpr std::string_view kTrueWords[] = {"1", "true", "yes", "on"};
constexpr std::string_view kFalseWords[] = {"0", "false", "no", "off"};

bool is_one_of(std::string_view text, std::span<const std::string_view> words) {
  return std::any_of(words.begin(), words.end(),
                     [&](std::string_view w) { return iequals(text, w); });
}

Checked fail(std::string expected) { return Checked{std::nullopt, std::move(expected)}; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool allowed_name(const Knob& knob, std::string_view name) {
  return std::any_of(knob.allowed.begin(), knob.allowed.end(), [&](std::string_view a) {
    return (knob.flags & kCaseInsensitive) ? iequals(a, name) : a == name;
  });
}

}  // namespace

NameList split_names(const Knob& knob, std::string_view text) {
  NameList out;
  text = trim(text);
  if (!text.empty() && text.front() == '^') {
    out.inverted = true;
    text.remove_prefix(1);
  }
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    if (item.empty()) continue;
    (allowed_name(knob, item) ? out.known : out.unknown).emplace_back(item);
  }
  return out;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string type_noun(const Knob& knob) {
  switch (knob.type) {
    case Type::Bool: return "a boolean";
    case Type::Int: return "an integer";
    case Type::String:
    case Type::Enum: return "a string";
  }
  return "a value";
}

std::string expectation(const Knob& knob) {
  switch (knob.type) {
    case Type::Int:
      if (knob.min != kNoMin && knob.max != kNoMax)
        return "an integer in " + std::to_string(knob.min) + ".." + std::to_string(knob.max);
      if (knob.min != kNoMin) return "an integer >= " + std::to_string(knob.min);
      if (knob.max != kNoMax) return "an integer <= " + std::to_string(knob.max);
      return "an integer";
    case Type::Enum:
      return "one of " + join_quoted(knob.allowed) +
             ((knob.flags & kCaseInsensitive) ? " (any letter case)" : "");
    case Type::String:
      if (knob.flags & kNameList) {
        std::string names;
        for (std::string_view name : knob.allowed)
          names += (names.empty() ? "" : ", ") + std::string(name);
        return "a comma-separated list of " + names +
               ((knob.flags & kCaseInsensitive) ? " (any letter case)" : "") +
               ", a leading ^ meaning all but those";
      }
      break;
    case Type::Bool: break;
  }
  return type_noun(knob);
}

Checked parse_text(const Knob& knob, std::string_view text) {
  switch (knob.type) {
    case Type::Bool:
      if (is_one_of(text, kFalseWords)) return Checked{Value{false}, {}};
      if (is_one_of(text, kTrueWords) || (knob.flags & kPresenceMeansTrue))
        return Checked{Value{true}, {}};
      return fail("a boolean (1/0, true/false, yes/no, on/off)");
    case Type::Int: {
      std::string_view digits = text;
      if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
      std::int64_t number = 0;
      const char* end = digits.data() + digits.size();
      auto [ptr, ec] = std::from_chars(digits.data(), end, number, 10);
      if (digits.empty() || ec != std::errc() || ptr != end) return fail(expectation(knob));
      return check_value(knob, Value{number});
    }
    case Type::String:
    case Type::Enum: return check_value(knob, Value{std::string(text)});
  }
  return fail(expectation(knob));
}

Checked check_value(const Knob& knob, Value value) {
  if (knob.type == Type::Int) {
    std::int64_t number = std::get<std::int64_t>(value);
    if (number < knob.min || number > knob.max) return fail(expectation(knob));
  } else if (knob.type == Type::Enum) {
    if (!allowed_name(knob, std::get<std::string>(value))) return fail(expectation(knob));
  } else if (knob.type == Type::String && (knob.flags & kNameList)) {
    if (!split_names(knob, std::get<std::string>(value)).unknown.empty())
      return fail(expectation(knob));
  }
  return Checked{std::move(value), {}};
}

std::string value_text(const Value& value) {
  if (const bool* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (const std::int64_t* i = std::get_if<std::int64_t>(&value)) return std::to_string(*i);
  return std::get<std::string>(value);
}

std::string quote(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

std::string join_quoted(Names names) {
  std::string out;
  for (std::string_view name : names) {
    if (!out.empty()) out += ", ";
    out += quote(name);
  }
  return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // One row of the classic dynamic programme: row[j] = distance(a[0..i), b[0..j)).
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string_view closest(std::string_view word, const std::vector<std::string>& candidates,
                         std::size_t max_distance) {
  std::string_view best;
  std::size_t best_distance = max_distance + 1;
  for (const std::string& candidate : candidates) {
    std::size_t d = edit_distance(word, candidate);
    if (d < best_distance) {
      best = candidate;
      best_distance = d;
    }
  }
  return best;
}

}  // namespace nccom::config::detail
