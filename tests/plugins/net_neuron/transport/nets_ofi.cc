// The nets transport_net_neuron_ofi_tests runs the parameterised suites over.
#include "harness.h"
#include "machine_fabric.h"

#include <rdma/fabric.h>

namespace nn_test {
std::vector<std::string> net_names() { return {"ofi"}; }

// What libnccom-net asks of a provider: RDM endpoints, tagged messages.
std::string machine_lacks_for_net(const std::string&) {
  return nccom_test::machine::libfabric_provider(kOfiProvider, FI_MSG | FI_TAGGED);
}
}  // namespace nn_test
