// The reference runtime's environment variables (knobs.h), and
// nrt_emu_knob, which lists them for nccom-info.
#include "knobs.h"

#include "nrt_emu.h"
#include "runtime_log.h"

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <iterator>

namespace nrt_emu::knobs {
namespace {

constexpr std::size_t kCount = std::size(kTable);

// Unset (LLONG_MIN) or the process's own default, per variable.
std::atomic<long long>* process_defaults() {
  static std::atomic<long long> values[kCount];
  static const bool unset = [] {
    for (auto& one : values) one.store(LLONG_MIN);
    return true;
  }();
  (void)unset;
  return values;
}

// A decimal integer in [lo, hi], blanks after it allowed.
std::optional<long long> parse(std::string_view text, long long lo, long long hi) {
  const std::string copy(text);
  const char* begin = copy.c_str();
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(begin, &end, 10);
  if (end == begin || errno != 0) return std::nullopt;
  while (*end == ' ' || *end == '\t') ++end;
  if (*end != '\0' || value < lo || value > hi) return std::nullopt;
  return value;
}

constexpr bool in_var_order() {
  for (std::size_t i = 0; i < kCount; ++i)
    if (static_cast<std::size_t>(kTable[i].var) != i) return false;
  return true;
}
static_assert(in_var_order(), "kTable must list the variables in Var's order");

}  // namespace

std::size_t count() { return kCount; }
const Declared& at(std::size_t index) { return kTable[index]; }

std::optional<std::string_view> text(Var v) {
  const char* value = std::getenv(declared(v).name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string_view(value);
}

std::optional<long long> integer(Var v, long long fallback, std::string& why) {
  const Declared& d = declared(v);
  const auto value = text(v);
  if (!value) {
    const long long own = process_defaults()[static_cast<std::size_t>(v)].load();
    return own != LLONG_MIN ? own : fallback;
  }
  if (auto n = parse(*value, d.lo, d.hi)) return n;
  why = std::string(d.name) + "=" + std::string(*value) + " is not an integer in " +
        std::to_string(d.lo) + ".." + std::to_string(d.hi);
  return std::nullopt;
}

std::optional<long long> integer_or_warn(Var v, long long fallback) {
  std::string why;
  const auto value = integer(v, fallback, why);
  if (!value) log::message(log::Level::Warn, "%s", why.c_str());
  return value;
}

bool is_set(Var v) {
  return text(v).has_value() || process_defaults()[static_cast<std::size_t>(v)].load() != LLONG_MIN;
}

void set_process_default(Var v, long long value) {
  process_defaults()[static_cast<std::size_t>(v)].store(value);
}

}  // namespace nrt_emu::knobs

extern "C" NRT_EMU_PUBLIC int nrt_emu_knob(int index, const char** name, const char** values,
                                           const char** default_text) {
  if (index < 0 || static_cast<std::size_t>(index) >= nrt_emu::knobs::count()) return 0;
  const nrt_emu::knobs::Declared& k = nrt_emu::knobs::at(static_cast<std::size_t>(index));
  if (name != nullptr) *name = k.name;
  if (values != nullptr) *values = k.values;
  if (default_text != nullptr) *default_text = k.default_text;
  return 1;
}
