// NCCL_DEBUG / NCCL_DEBUG_SUBSYS / NCCL_DEBUG_FILE / log.stream parsing and the %h/%p
// expansion of the debug-file pattern. Pure functions: no logger state here.
#include "log/log.h"
#include "log/log_internal.h"

#include <unistd.h>

#include <array>
#include <cctype>
#include <cstring>
#include <string>
#include <string_view>

namespace nccom::log {
namespace {

struct LevelName {
  std::string_view name;
  Level level;
};
constexpr std::array<LevelName, 6> kLevelNames{{{"NONE", Level::None},
                                                {"VERSION", Level::Version},
                                                {"WARN", Level::Warn},
                                                {"INFO", Level::Info},
                                                {"ABORT", Level::Abort},
                                                {"TRACE", Level::Trace}}};

struct SubsysName {
  std::string_view name;
  unsigned long bits;
};
constexpr std::array<SubsysName, 15> kSubsysNames{{{"INIT", kInit},
                                                   {"COLL", kColl},
                                                   {"P2P", kP2P},
                                                   {"SHM", kShm},
                                                   {"NET", kNet},
                                                   {"GRAPH", kGraph},
                                                   {"TUNING", kTuning},
                                                   {"ENV", kEnv},
                                                   {"ALLOC", kAlloc},
                                                   {"CALL", kCall},
                                                   {"PROXY", kProxy},
                                                   {"NVLS", kNvls},
                                                   {"BOOTSTRAP", kBootstrap},
                                                   {"REG", kReg},
                                                   {"ALL", kAll}}};

struct StreamName {
  std::string_view name;
  Stream stream;
};
constexpr std::array<StreamName, 2> kStreamNames{
    {{"stdout", Stream::Stdout}, {"stderr", Stream::Stderr}}};

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(a[i])) !=
        std::toupper(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

template <class Table>
std::string valid_names(const Table& table) {
  std::string out;
  for (const auto& entry : table) {
    if (!out.empty()) out += ", ";
    out += entry.name;
  }
  return out;
}

Result<Level> parse_level(std::string_view text) {
  text = trim(text);
  if (text.empty()) return Level::None;
  for (const auto& entry : kLevelNames) {
    if (iequals(text, entry.name)) return entry.level;
  }
  return make_error(NRT_INVALID, "NCCL_DEBUG: unknown level \"" + std::string(text) +
                                     "\"; valid: " + valid_names(kLevelNames));
}

Result<Stream> parse_stream(std::string_view text) {
  text = trim(text);
  if (text.empty()) return Stream::Stdout;
  for (const auto& entry : kStreamNames) {
    if (iequals(text, entry.name)) return entry.stream;
  }
  return make_error(NRT_INVALID, "log.stream: unknown stream \"" + std::string(text) +
                                     "\"; valid: " + valid_names(kStreamNames));
}

// As NCCL: "^" starts from every bit and clears the named ones; empty items
// between commas are skipped, so "^" alone means ALL.
Result<unsigned long> parse_subsys(std::string_view text, unsigned long default_mask) {
  text = trim(text);
  if (text.empty()) return default_mask;
  const bool invert = text.front() == '^';
  if (invert) text.remove_prefix(1);
  unsigned long named = 0;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view token = trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    if (token.empty()) continue;
    bool known = false;
    for (const auto& entry : kSubsysNames) {
      if (iequals(token, entry.name)) {
        named |= entry.bits;
        known = true;
        break;
      }
    }
    if (!known) {
      return make_error(NRT_INVALID, "NCCL_DEBUG_SUBSYS: unknown subsystem \"" +
                                         std::string(token) +
                                         "\"; valid: " + valid_names(kSubsysNames));
    }
  }
  return invert ? ~named : named;
}

}  // namespace

namespace detail {

const char* short_hostname() {
  struct Name {
    char text[256];
  };
  static const Name name = [] {
    Name n{};
    if (gethostname(n.text, sizeof(n.text) - 1) != 0) std::strcpy(n.text, "unknown");
    n.text[sizeof(n.text) - 1] = '\0';
    if (char* dot = std::strchr(n.text, '.')) *dot = '\0';
    return n;
  }();
  return name.text;
}

}  // namespace detail

Result<Settings> parse_settings(std::string_view level, std::string_view subsys,
                                std::string_view file_pattern, std::string_view stream) {
  Settings settings;
  Result<Level> parsed_level = parse_level(level);
  if (!parsed_level) return parsed_level.take_error();
  Result<unsigned long> mask = parse_subsys(subsys, settings.subsys);
  if (!mask) return mask.take_error();
  Result<Stream> parsed_stream = parse_stream(stream);
  if (!parsed_stream) return parsed_stream.take_error();
  settings.stream = *parsed_stream;
  settings.level = *parsed_level;
  settings.subsys = *mask;
  settings.file_pattern = std::string(file_pattern);
  return settings;
}

std::string expand_file_pattern(std::string_view pattern) {
  std::string out;
  out.reserve(pattern.size() + 32);
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    const char spec = pattern[++i];
    if (spec == 'h') {
      out += detail::short_hostname();
    } else if (spec == 'p') {
      out += std::to_string(getpid());
    } else if (spec == '%') {
      out += '%';
    } else {  // unknown conversions are kept as written
      out += '%';
      out += spec;
    }
  }
  return out;
}

}  // namespace nccom::log
