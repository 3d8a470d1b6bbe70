#include "selection.h"

namespace nccom::topo_neuron {

SearchChoice selectSearch(Variant variant, std::optional<bool> knob, bool defaultNew) {
  if (variant == Variant::Trn3SwitchV1)
    return {SearchAlgorithm::New, false, "Trn3 Switch-V1 always uses the NEW search"};
  if (knob.has_value())
    return {*knob ? SearchAlgorithm::New : SearchAlgorithm::Old, true,
            *knob ? "NEW search requested by NCCL_GRAPH_USE_NEW_ALGORITHM"
                  : "OLD search requested by NCCL_GRAPH_USE_NEW_ALGORITHM"};
  return {defaultNew ? SearchAlgorithm::New : SearchAlgorithm::Old, false,
          defaultNew ? "NEW search is the configured default" : "OLD search is the default"};
}

}  // namespace nccom::topo_neuron
