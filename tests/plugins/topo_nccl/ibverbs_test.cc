// TopoNcclIbverbs: verbs codes, NIC description from an injected listing,
// and libibverbs itself on this machine.
#include "test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace topo_nccl_test {
namespace {
using namespace nccom::topo_nccl;
using nccom::Result;
namespace fs = std::filesystem;

TEST(TopoNcclIbverbs, SpeedIsLaneRateTimesLanes) {
  EXPECT_EQ(verbsSpeedMbps(1, 1), 2500);       // SDR 1x
  EXPECT_EQ(verbsSpeedMbps(2, 2), 20000);      // DDR 4x
  EXPECT_EQ(verbsSpeedMbps(4, 2), 40000);      // QDR 4x
  EXPECT_EQ(verbsSpeedMbps(8, 2), 40000);      // FDR10 4x
  EXPECT_EQ(verbsSpeedMbps(16, 8), 168000);    // FDR 12x
  EXPECT_EQ(verbsSpeedMbps(32, 2), 100000);    // EDR 4x
  EXPECT_EQ(verbsSpeedMbps(64, 4), 400000);    // HDR 8x
  EXPECT_EQ(verbsSpeedMbps(128, 16), 200000);  // NDR 2x
  EXPECT_EQ(verbsSpeedMbps(3, 2), 0);          // not a single speed bit
  EXPECT_EQ(verbsSpeedMbps(0, 2), 0);
  EXPECT_EQ(verbsSpeedMbps(32, 3), 0);  // not a single width bit
  EXPECT_EQ(verbsSpeedMbps(32, 0), 0);
}

TEST(TopoNcclIbverbs, StateAndLinkLayerNames) {
  EXPECT_EQ(verbsPortStateName(1), "DOWN");
  EXPECT_EQ(verbsPortStateName(4), "ACTIVE");
  EXPECT_EQ(verbsPortStateName(5), "ACTIVE_DEFER");
  EXPECT_EQ(verbsPortStateName(9), "UNKNOWN(9)");
  EXPECT_EQ(verbsLinkLayerName(1), "InfiniBand");
  EXPECT_EQ(verbsLinkLayerName(2), "Ethernet");
  EXPECT_EQ(verbsLinkLayerName(7), "UNKNOWN(7)");
}

RdmaDeviceInfo device(const std::string& name, std::vector<RdmaPortInfo> ports = {}) {
  RdmaDeviceInfo d;
  d.name = name;
  d.nodeGuid = 0xfe80;
  d.maxQp = 16;
  d.ports = std::move(ports);
  return d;
}

TEST(TopoNcclIbverbs, InjectedNicsResolvedSortedAndChecked) {
  StandardHost fake;
  RdmaListing listing;
  listing.devices.push_back(device("rdmap129s0", {{1, 4, 32, 2, 0}, {2, 1, 0, 0, 2}}));
  listing.devices.push_back(device("mlx5_0", {{1, 4, 3, 2, 1}}));  // no sysfs entry
  listing.devices.push_back(device("../../etc"));
  listing.devices.push_back(device(""));
  listing.notes.push_back("skipped RDMA device x: ibv_open_device failed (Permission denied)");
  Notes notes;
  std::string reason = "stale";
  const std::vector<Nic> nics = describeNics(listing, fake.sysfs().root(), notes, &reason);
  EXPECT_EQ(reason, "");
  ASSERT_EQ(nics.size(), 2u);
  EXPECT_EQ(nics[0], (Nic{"mlx5_0", 0xfe80, "", 16, {NicPort{1, "ACTIVE", "InfiniBand", 0}}}));
  EXPECT_EQ(
      nics[1],
      (Nic{"rdmap129s0",
           0xfe80,
           "0000:81:00.0",
           16,
           {NicPort{1, "ACTIVE", "Unspecified", 100000}, NicPort{2, "DOWN", "Ethernet", 0}}}));
  const std::string root = fake.sysfs().root();
  const std::vector<std::string> expected = {
      "skipped RDMA device x: ibv_open_device failed (Permission denied)",
      "NIC mlx5_0: no PCI function (" + root +
          "/class/infiniband/mlx5_0/device: No such file or directory)",
      "NIC mlx5_0 port 1: unknown active_speed 3 or width 2; speed reported as 0",
      "skipped RDMA device \"../../etc\": not a kernel device name (letters, digits, '_', '-', "
      "'.'; under 64)",
      "skipped RDMA device \"\": not a kernel device name (letters, digits, '_', '-', '.'; under "
      "64)",
  };
  EXPECT_EQ(notes.lines(), expected);
}

TEST(TopoNcclIbverbs, NoDevicesIsAReasonNotAnError) {
  StandardHost fake;
  Notes notes;
  std::string reason;
  EXPECT_TRUE(describeNics(RdmaListing{}, fake.sysfs().root(), notes, &reason).empty());
  EXPECT_EQ(reason, "no RDMA devices: the RDMA device list is empty");
  RdmaListing failed;
  failed.emptyReason = "ibv_get_device_list failed (Function not implemented)";
  EXPECT_TRUE(describeNics(failed, fake.sysfs().root(), notes, &reason).empty());
  EXPECT_EQ(reason, "no RDMA devices: ibv_get_device_list failed (Function not implemented)");
  RdmaListing allBad;
  allBad.devices.push_back(device("a/b"));
  EXPECT_TRUE(describeNics(allBad, fake.sysfs().root(), notes, &reason).empty());
  EXPECT_EQ(reason, "no RDMA devices: every RDMA device was skipped");

  // Through detectHost, with the reason logged at INFO.
  FixedNicSource none{RdmaListing{}};
  DetectOptions options = fake.options();
  options.nicSource = &none;
  LogCapture log;
  ASSERT_TRUE(log.configured());
  Result<HostDescription> host = detectHost(options);
  ASSERT_TRUE(host.ok()) << host.error().message;
  EXPECT_TRUE(host->nics.empty());
  EXPECT_EQ(host->nicReason, "no RDMA devices: the RDMA device list is empty");
  const std::string text = log.text();
  EXPECT_NE(text.find("INFO TOPO host detection: no RDMA devices: the RDMA device list is empty"),
            std::string::npos)
      << text;
}

// The RDMA devices the kernel exposes here, independently of libibverbs.
std::vector<std::string> kernelRdmaDevices() {
  std::error_code ec;
  std::vector<std::string> names;
  for (fs::directory_iterator it("/sys/class/infiniband", ec), end; !ec && it != end;
       it.increment(ec))
    names.push_back(it->path().filename().string());
  return names;
}

TEST(TopoNcclIbverbs, RealLibibverbs) {
  const RdmaListing listing = makeIbverbsNicSource()->list();
  if (kernelRdmaDevices().empty()) {
    EXPECT_TRUE(listing.devices.empty());
    EXPECT_FALSE(listing.emptyReason.empty());
  }
  for (const RdmaDeviceInfo& d : listing.devices) EXPECT_FALSE(d.name.empty());
}

// Detection on this machine accounts for exactly the devices the kernel
// lists: none (and says so), or each one as a NIC or in a note saying why
// not; and no NIC the kernel does not have.
TEST(TopoNcclIbverbs, RealHostReportsTheKernelsRdmaDevices) {
  const std::vector<std::string> kernel = kernelRdmaDevices();
  LogCapture log;
  ASSERT_TRUE(log.configured());
  Result<HostDescription> host = detectHost(DetectOptions{});
  ASSERT_TRUE(host.ok()) << host.error().message;
  const std::string text = log.text();
  if (kernel.empty()) {
    EXPECT_TRUE(host->nics.empty());
    EXPECT_EQ(host->nicReason.rfind("no RDMA devices: ", 0), 0u) << host->nicReason;
    EXPECT_NE(text.find("INFO TOPO host detection: no RDMA devices: "), std::string::npos) << text;
    return;
  }
  for (const Nic& nic : host->nics)
    EXPECT_NE(std::find(kernel.begin(), kernel.end(), nic.name), kernel.end())
        << nic.name << " is not in /sys/class/infiniband";
  for (const std::string& name : kernel) {
    const bool listed = std::any_of(host->nics.begin(), host->nics.end(),
                                    [&](const Nic& nic) { return nic.name == name; });
    const bool noted = std::any_of(host->notes.begin(), host->notes.end(), [&](const auto& note) {
      return note.find(name) != std::string::npos;
    });
    // No NIC at all: the reason covers every device (libibverbs absent, say).
    const bool explained = host->nics.empty() && !host->nicReason.empty();
    EXPECT_TRUE(listed || noted || explained)
        << "the kernel has RDMA device " << name << "; detection neither lists it nor says why\n"
        << text;
  }
}

}  // namespace
}  // namespace topo_nccl_test
