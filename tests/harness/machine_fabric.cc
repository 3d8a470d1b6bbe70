#include "machine_fabric.h"

#include "build_paths.h"
#include "child_process.h"

#include <gtest/gtest.h>
#include <rdma/fabric.h>

namespace nccom_test::machine {

std::string libfabric_provider(const std::string& provider, uint64_t caps) {
  const ChildResult r = run_child(NCCOM_FABRIC_PROBE, {provider, std::to_string(caps)}, {});
  if (r.exit_code == 0) return "";
  if (r.exit_code == 1 && !r.out.empty()) return r.out;
  ADD_FAILURE() << "the libfabric probe " << NCCOM_FABRIC_PROBE << " failed (exit " << r.exit_code
                << ", signal " << r.signal << "): " << r.err;
  return "";
}

std::string libfabric_version() {
  const uint32_t v = fi_version();
  return std::to_string(FI_MAJOR(v)) + "." + std::to_string(FI_MINOR(v));
}

bool libfabric_at_least(unsigned major, unsigned minor) {
  return fi_version() >= FI_VERSION(major, minor);
}

}  // namespace nccom_test::machine
