// Shared by the topo_nccl suites: a temp dir with the standard fake host,
// and capture of the INFO log into a file.
#pragma once

#include "child_process.h"
#include "detect.h"
#include "detect_fixture.h"
#include "fake_sysfs.h"
#include "log/log.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace topo_nccl_test {

class StandardHost {
 public:
  StandardHost()
      : sysfs_(dir_.path() + "/sys"),
        cpuinfo_(buildStandardHost(sysfs_)),
        nics_(standardNicListing()) {}

  const FakeSysfs& sysfs() const { return sysfs_; }
  const std::string& cpuinfo() const { return cpuinfo_; }
  std::string dev(const std::string& path) const {
    return sysfs_.root() + "/" + FakeSysfs::devicePath(path);
  }

  nccom::topo_nccl::DetectOptions options() const {
    nccom::topo_nccl::DetectOptions o;
    o.sysfsRoot = sysfs_.root();
    o.cpuinfoPath = cpuinfo_;
    o.machine = "x86_64";
    o.nicSource = &nics_;
    return o;
  }

 private:
  nccom_test::TempDir dir_;
  FakeSysfs sysfs_;
  std::string cpuinfo_;
  nccom::topo_nccl::FixedNicSource nics_;
};

// Routes the log (INFO, every subsystem) into a file for the object's life.
class LogCapture {
 public:
  LogCapture() {
    nccom::log::Settings settings;
    settings.level = nccom::log::Level::Info;
    settings.subsys = nccom::log::kAll;
    settings.file_pattern = dir_.path() + "/log.txt";
    configured_ = nccom::log::configure(settings).ok();
  }
  ~LogCapture() { nccom::log::reset(); }
  bool configured() const { return configured_; }
  std::string text() const {
    std::ifstream in(dir_.path() + "/log.txt");
    std::stringstream all;
    all << in.rdbuf();
    return all.str();
  }

 private:
  nccom_test::TempDir dir_;
  bool configured_ = false;
};

inline bool hasNote(const nccom::topo_nccl::HostDescription& host, const std::string& note) {
  return std::find(host.notes.begin(), host.notes.end(), note) != host.notes.end();
}
inline bool hasNoteContaining(const nccom::topo_nccl::HostDescription& host, const std::string& a,
                              const std::string& b = "") {
  return std::any_of(host.notes.begin(), host.notes.end(), [&](const std::string& n) {
    return n.find(a) != std::string::npos && n.find(b) != std::string::npos;
  });
}

}  // namespace topo_nccl_test
