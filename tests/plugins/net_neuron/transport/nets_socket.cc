// The nets transport_net_neuron_tests runs the parameterised suites over.
#include "harness.h"

namespace nn_test {
std::vector<std::string> net_names() { return {"socket"}; }
}  // namespace nn_test
