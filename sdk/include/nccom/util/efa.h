// nccom::efa_device — whether this host has an EFA device, for deciding how
// loudly a network plugin that needs EFA reports that it could not start.
//
// An EFA device is an RDMA device the kernel lists under
// /sys/class/infiniband whose `device/driver` link names the `efa` driver
// (…/bus/pci/drivers/efa). No libfabric call is made: the answer must not
// depend on which providers the installed libfabric has, nor on the plugin
// that failed. Header-only: used by the host and by plugins alike.
#pragma once

#include <filesystem>
#include <string>
#include <system_error>

namespace nccom {

inline constexpr const char* kRdmaClassDir = "/sys/class/infiniband";

// The name of the first device under `class_dir` bound to the efa driver
// (in directory order), or "" when there is none, the directory is missing
// or unreadable.
inline std::string efa_device(const std::string& class_dir = kRdmaClassDir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (fs::directory_iterator it(class_dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code link_ec;
    const fs::path driver = fs::read_symlink(it->path() / "device" / "driver", link_ec);
    if (!link_ec && driver.filename() == "efa") return it->path().filename().string();
  }
  return "";
}

}  // namespace nccom
