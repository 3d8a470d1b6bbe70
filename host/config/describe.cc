// Config::describe(): the table `nccom-config` prints.
#include "config/config.h"
#include "config/plugin_knobs.h"
#include "config/value.h"

#include <algorithm>

namespace nccom::config {
namespace {

constexpr std::size_t kWidth = 100;  // wrap help text at this column
constexpr std::string_view kIndent = "    ";

// Strings are shown quoted, so an empty value is visible.
std::string shown_value(const Entry& entry) {
  if (std::holds_alternative<std::string>(entry.value))
    return detail::quote(std::get<std::string>(entry.value));
  return entry.text();
}

// "[an integer in 1..64; env NCCL_NSOCKS_PERTHREAD]"
std::string facts(const Knob& knob) {
  std::string out = "[" + detail::expectation(knob);
  if (!knob.env.empty()) {
    out += "; env ";
    for (std::size_t i = 0; i < knob.env.size(); ++i)
      out += (i == 0 ? "" : ", then ") + std::string(knob.env[i]);
  }
  if (knob.flags & kPresenceMeansTrue) out += "; in the environment, set means on";
  return out + "]";
}

void append_wrapped(std::string& out, std::string_view text) {
  std::string line(kIndent);
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(start, end - start);
    if (line.size() > kIndent.size() && line.size() + 1 + word.size() > kWidth) {
      out += line + "\n";
      line = std::string(kIndent);
    }
    if (line.size() > kIndent.size()) line += ' ';
    line += word;
    start = end + 1;
  }
  if (line.size() > kIndent.size()) out += line + "\n";
}

std::string pad(std::string text, std::size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

}  // namespace

std::string describe_entries(const std::vector<Entry>& entries) {
  std::size_t key_width = 3;
  std::size_t value_width = 5;
  for (const Entry& e : entries) {
    key_width = std::max(key_width, e.key().size());
    value_width = std::max(value_width, shown_value(e).size());
  }
  std::string out = pad("KEY", key_width + 2) + pad("VALUE", value_width + 2) + "SOURCE\n";
  for (const Entry& e : entries) {
    out += pad(std::string(e.key()), key_width + 2) + pad(shown_value(e), value_width + 2) +
           e.source.to_string() + "\n";
    append_wrapped(out, e.knob->help);
    out += std::string(kIndent) + facts(*e.knob) + "\n";
  }
  return out;
}

std::string Config::describe() const {
  std::string out = "nccom configuration\n";
  out += "  file:    " + (file_.empty() ? std::string("none (built-in defaults)") : file_) + "\n";
  out += "  cluster: " +
         (cluster_.empty() ? std::string("none") : cluster_ + " (from " + cluster_origin_ + ")") +
         "\n\n";

  out += describe_entries(entries_);
  if (!plugin_settings_.empty()) {
    out += "\nplugin settings in the file (each checked when its plugin is loaded):\n";
    for (const PluginSetting& s : plugin_settings_)
      out += "  " + s.shown + " = " + s.described + "  (" + s.source.to_string() + ")\n";
  }
  return out;
}

}  // namespace nccom::config
