// The nets transport_net_neuron_ofi_tests runs the parameterised suites over.
#include "harness.h"

namespace nn_test {
std::vector<std::string> net_names() { return {"ofi"}; }
}  // namespace nn_test
