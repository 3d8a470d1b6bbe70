// The one merge of a knob table's layers (resolve.h).
#include "config/resolve.h"

#include "config/value.h"

#include <optional>

namespace nccom::config::detail {
namespace {

std::optional<std::string> env_value(const EnvLookup& getenv, const std::string& name) {
  const char* value = getenv ? getenv(name.c_str()) : nullptr;
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

// A name list's bad value under kEnvFallsBack: NCCL drops the names it does
// not know and keeps the others.
void keep_known_names(const Knob& knob, const std::string& text, Source source, Layer& layer,
                      Ignored& note) {
  NameList names = split_names(knob, text);
  note.unknown = names.unknown;
  if (!names.inverted && names.known.empty()) return;
  std::string kept = names.inverted ? "^" : "";
  for (std::size_t i = 0; i < names.known.size(); ++i) kept += (i == 0 ? "" : ",") + names.known[i];
  layer[&knob] = Assigned{Value{std::move(kept)}, std::move(source)};
  note.kept_known = true;
}

}  // namespace

Layer read_env(const Registry& registry, const EnvLookup& getenv, std::vector<Problem>& problems,
               std::vector<Ignored>& ignored) {
  Layer layer;
  for (const Knob* knob : registry.knobs) {
    for (std::string_view name : knob->env) {
      const std::string var(name);
      std::optional<std::string> text = env_value(getenv, var);
      if (!text) continue;
      Source source;
      source.kind = Source::Kind::Env;
      source.env_var = var;
      Checked checked = parse_text(*knob, *text);
      if (checked.value) {
        layer[knob] = Assigned{std::move(*checked.value), std::move(source)};
      } else if (knob->flags & kEnvFallsBack) {
        Ignored note{knob, var, *text, {}, false};
        if (knob->flags & kNameList) keep_known_names(*knob, *text, std::move(source), layer, note);
        ignored.push_back(std::move(note));
      } else {
        problems.push_back(Problem{0, 0,
                                   var + "=" + quote(*text) + ": expected " + checked.expected +
                                       " (for " + std::string(knob->key) + ")"});
      }
      break;
    }
  }
  return layer;
}

std::vector<Entry> resolve(const Registry& registry,
                           std::initializer_list<const Layer*> lowest_first) {
  std::vector<Entry> entries;
  entries.reserve(registry.knobs.size());
  for (std::size_t i = 0; i < registry.knobs.size(); ++i) {
    const Knob* knob = registry.knobs[i];
    Entry entry{knob, registry.defaults[i], Source{}};
    for (const Layer* layer : lowest_first) {
      if (layer == nullptr) continue;
      if (auto it = layer->find(knob); it != layer->end()) {
        entry.value = it->second.value;
        entry.source = it->second.source;
      }
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

}  // namespace nccom::config::detail
