// OLD vs NEW search selection as a pure function: the caller reads
// NCCL_GRAPH_USE_NEW_ALGORITHM and passes its value.
#pragma once

#include "platform.h"

#include <optional>

namespace nccom::topo_neuron {

enum class SearchAlgorithm { Old, New };

struct SearchChoice {
  SearchAlgorithm algorithm;
  bool fromKnob;       // the knob decided: the caller logs its value (the
                       // host has logged where it was set)
  const char* reason;  // one line for the INFO log
};

// Trn3 Switch-V1 always takes NEW (its jbog/rack fabric has no OLD-search
// expression); otherwise the knob when set, else `defaultNew` (OFF in the
// original; configurable, docs/decisions/topo-neuron.md, "OLD vs NEW").
SearchChoice selectSearch(Variant variant, std::optional<bool> knob, bool defaultNew = false);

}  // namespace nccom::topo_neuron
