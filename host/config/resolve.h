// Internal to nccom_config: the one merge of a knob table's values, for the
// host's table (load) and for every plugin's (PluginSection::bind):
// default < file top level < active cluster's section < environment.
#pragma once

#include "config/config.h"
#include "config/file_layers.h"
#include "config/registry.h"

#include <initializer_list>
#include <string>
#include <vector>

namespace nccom::config::detail {

// A bad environment value of a knob with kEnvFallsBack, until the merge
// tells what is used instead.
struct Ignored {
  const Knob* knob;
  std::string variable;
  std::string value;
  std::vector<std::string> unknown;  // a name list's unknown names; empty: the whole value
  bool kept_known = false;           // a name list whose known names are used
};

// The environment layer of `registry`'s knobs. The first variable of a knob
// that is set (an empty value counts as unset, as NCCL's parameters do) wins;
// a bad value is a problem (and does not fall through to the next variable),
// or, for a knob with kEnvFallsBack, ignored and noted in `ignored`.
Layer read_env(const Registry& registry, const EnvLookup& getenv, std::vector<Problem>& problems,
               std::vector<Ignored>& ignored);

// One entry per knob of `registry`, in its order: the default, replaced by
// each layer in turn, lowest first (a null layer is skipped).
std::vector<Entry> resolve(const Registry& registry,
                           std::initializer_list<const Layer*> lowest_first);

}  // namespace nccom::config::detail
