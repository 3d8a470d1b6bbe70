// Builds a fake sysfs tree in a directory, shaped like the real one:
// devices under devices/pciDDDD:BB/..., relative symlinks from
// bus/pci/devices and class/infiniband/<name>/device, NUMA nodes under
// devices/system/node. Tests then break pieces of it on purpose.
#pragma once

#include <string>

namespace topo_nccl_test {

struct PciAttrs {
  std::string classCode = "0x060400";
  std::string vendor = "0x8086";
  std::string device = "0x0000";
  std::string subsystemVendor = "0x0000";
  std::string subsystemDevice = "0x0000";
  std::string maxLinkSpeed = "16.0 GT/s PCIe";
  std::string maxLinkWidth = "16";
  std::string numaNode = "-1";
};

class FakeSysfs {
 public:
  explicit FakeSysfs(std::string root);
  const std::string& root() const { return root_; }

  // Writes <root>/<relative> (parents created), with a trailing newline as
  // sysfs prints.
  void write(const std::string& relative, const std::string& content) const;
  // <root>/<relative> becomes a symlink to `target` (taken as is).
  void symlink(const std::string& relative, const std::string& target) const;
  void remove(const std::string& relative) const;

  void addNumaNode(int id, const std::string& cpulist, const std::string& cpumap) const;
  // `path` is below devices/, ending in the function's busId, e.g.
  // "pci0000:00/0000:00:01.0/0000:01:00.0".
  void addPci(const std::string& path, const PciAttrs& attrs) const;
  // class/infiniband/<name>/device -> the PCI function at `pciPath`.
  void addInfiniband(const std::string& name, const std::string& pciPath) const;
  // <root>/cpuinfo with one processor block; returns its path.
  std::string writeCpuinfo(const std::string& vendor, const std::string& family,
                           const std::string& model) const;

  // The relative path of a device's directory ("devices/<path>").
  static std::string devicePath(const std::string& path) { return "devices/" + path; }

 private:
  std::string root_;
};

}  // namespace topo_nccl_test
