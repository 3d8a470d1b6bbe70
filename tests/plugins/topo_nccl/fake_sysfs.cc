#include "fake_sysfs.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace topo_nccl_test {
namespace fs = std::filesystem;

FakeSysfs::FakeSysfs(std::string root) : root_(std::move(root)) {
  fs::create_directories(fs::path(root_) / "bus/pci/devices");
  fs::create_directories(fs::path(root_) / "devices/system/node");
}

void FakeSysfs::write(const std::string& relative, const std::string& content) const {
  const fs::path path = fs::path(root_) / relative;
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content << '\n';
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

void FakeSysfs::symlink(const std::string& relative, const std::string& target) const {
  const fs::path path = fs::path(root_) / relative;
  fs::create_directories(path.parent_path());
  std::error_code ignored;
  fs::remove_all(path, ignored);
  fs::create_symlink(target, path);
}

void FakeSysfs::remove(const std::string& relative) const {
  fs::remove_all(fs::path(root_) / relative);
}

void FakeSysfs::addNumaNode(int id, const std::string& cpulist, const std::string& cpumap) const {
  const std::string dir = "devices/system/node/node" + std::to_string(id) + "/";
  write(dir + "cpulist", cpulist);
  write(dir + "cpumap", cpumap);
}

void FakeSysfs::addPci(const std::string& path, const PciAttrs& a) const {
  const std::string dir = devicePath(path) + "/";
  write(dir + "class", a.classCode);
  write(dir + "vendor", a.vendor);
  write(dir + "device", a.device);
  write(dir + "subsystem_vendor", a.subsystemVendor);
  write(dir + "subsystem_device", a.subsystemDevice);
  write(dir + "max_link_speed", a.maxLinkSpeed);
  write(dir + "max_link_width", a.maxLinkWidth);
  write(dir + "numa_node", a.numaNode);
  const std::string busId = fs::path(path).filename().string();
  symlink("bus/pci/devices/" + busId, "../../../devices/" + path);
}

void FakeSysfs::addInfiniband(const std::string& name, const std::string& pciPath) const {
  // Real sysfs: class/infiniband/<name> -> ../../devices/<pci>/infiniband/<name>,
  // and that directory's "device" -> ../../ (the PCI function).
  const std::string ibDir = devicePath(pciPath) + "/infiniband/" + name;
  fs::create_directories(fs::path(root_) / ibDir);
  symlink(ibDir + "/device", "../..");
  symlink("class/infiniband/" + name, "../../" + ibDir);
}

std::string FakeSysfs::writeCpuinfo(const std::string& vendor, const std::string& family,
                                    const std::string& model) const {
  std::string block = "processor\t: 0\n";
  if (!vendor.empty()) block += "vendor_id\t: " + vendor + "\n";
  if (!family.empty()) block += "cpu family\t: " + family + "\n";
  if (!model.empty()) block += "model\t\t: " + model + "\n";
  block += "model name\t: Fake CPU\n\nprocessor\t: 1\nvendor_id\t: Other\n";
  write("cpuinfo", block);
  return (fs::path(root_) / "cpuinfo").string();
}

}  // namespace topo_nccl_test
