// The nets transport_net_neuron_tests runs the parameterised suites over.
#include "harness.h"

namespace nn_test {
std::vector<std::string> net_names() { return {"socket"}; }

// The socket net needs only loopback TCP, which every machine has.
std::string machine_lacks_for_net(const std::string&) { return ""; }
}  // namespace nn_test
