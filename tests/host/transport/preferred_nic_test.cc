// neuronPreferredNcRidNic's rule over hand-made tables: devices and NICs in
// PCI order, device i of D -> NIC floor(i*N/D); PCI addresses read from sysfs
// paths; unknown devices and empty tables refused with what is known.
#include "transport/preferred_nic.h"

#include <gtest/gtest.h>

#include <cstring>

namespace nccom::transport {
namespace {

TEST(PreferredNic, PciAddressIsTheLastBdfComponentOfTheSysfsPath) {
  EXPECT_EQ(pci_address("/sys/devices/pci0000:00/0000:00:02.0/0000:10:1c.0"), "0000:10:1c.0");
  EXPECT_EQ(pci_address("/sys/devices/pci0000:00/0000:00:06.0/virtio3"), "0000:00:06.0");
  EXPECT_EQ(pci_address("0000:a0:00.1/"), "0000:a0:00.1");
  EXPECT_EQ(pci_address("/sys/devices/virtual/net/lo"), std::nullopt);
  EXPECT_EQ(pci_address(""), std::nullopt);
  EXPECT_EQ(pci_address("/x/0000:10:1c"), std::nullopt);
}

// Four devices over two NICs, listed out of PCI order: the two lowest bus ids
// share the NIC with the lower PCI address.
NicTable four_by_two() {
  NicTable t;
  t.devices = {{0, 10, 0x40}, {1, 11, 0x10}, {2, 12, 0x30}, {3, 13, 0x20}};
  t.nics = {{0, "efa1", "/sys/devices/pci0000:80/0000:80:01.0/0000:90:00.0"},
            {1, "efa0", "/sys/devices/pci0000:00/0000:00:01.0/0000:05:00.0"}};
  return t;
}

int nic_of(const NicTable& t, uint32_t dev, uint32_t rid) {
  auto n = preferred_nic(t, dev, rid);
  EXPECT_TRUE(n.ok()) << n.error().message;
  return n.ok() ? (*n)->index : -1;
}

TEST(PreferredNic, DevicesShareTheNicsInPciOrder) {
  const NicTable t = four_by_two();
  // PCI order of devices: 1 (0x10), 3 (0x20), 2 (0x30), 0 (0x40);
  // of NICs: index 1 (0000:05), index 0 (0000:90).
  EXPECT_EQ(nic_of(t, 1, 11), 1);
  EXPECT_EQ(nic_of(t, 3, 13), 1);
  EXPECT_EQ(nic_of(t, 2, 12), 0);
  EXPECT_EQ(nic_of(t, 0, 10), 0);
}

TEST(PreferredNic, NicsWithoutPciAddressComeLast) {
  NicTable t;
  t.devices = {{0, 0, 1}, {1, 1, 2}};
  t.nics = {{0, "lo", ""}, {1, "eth0", "/sys/devices/pci0000:00/0000:00:03.0"}};
  EXPECT_EQ(nic_of(t, 0, 0), 1);
  EXPECT_EQ(nic_of(t, 1, 1), 0);
}

TEST(PreferredNic, RefusesUnknownDevicesAndEmptyTables) {
  const NicTable t = four_by_two();
  auto n = preferred_nic(t, 1, 12);  // device 1 exists, with rid 11
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().status, NRT_INVALID);
  EXPECT_NE(n.error().message.find("device 1 with routing id 12 is no device"), std::string::npos)
      << n.error().message;
  EXPECT_NE(n.error().message.find("(1, 11)"), std::string::npos) << n.error().message;
  NicTable none = t;
  none.nics.clear();
  n = preferred_nic(none, 1, 11);
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.error().message.find("no network device is known"), std::string::npos);
}

TEST(PreferredNic, BdfFormNeedsAPciAddressAndRoomForIt) {
  const NetDevice efa{3, "efa0", "/sys/devices/pci0000:00/0000:00:01.0/0000:05:00.0"};
  char buf[13];
  std::memset(buf, 'x', sizeof buf);
  auto s = write_bdf(efa, buf, sizeof buf);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_STREQ(buf, "0000:05:00.0");
  char small[12];
  std::memset(small, 'x', sizeof small);
  s = write_bdf(efa, small, sizeof small);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().status, NRT_INVALID);
  EXPECT_NE(s.error().message.find("bdf_len 12 is too short for \"0000:05:00.0\" (needs 13"),
            std::string::npos)
      << s.error().message;
  EXPECT_EQ(small[0], 'x') << "nothing written on failure";
  s = write_bdf(NetDevice{0, "lo", ""}, buf, sizeof buf);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().status, NRT_FAILURE);
  EXPECT_NE(s.error().message.find("net device 0 (lo) has no PCI address"), std::string::npos);
}

}  // namespace
}  // namespace nccom::transport
