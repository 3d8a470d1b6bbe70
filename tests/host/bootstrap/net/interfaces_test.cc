// Interface filters, the default selection rule and interface choice. Only
// loopback is assumed to exist; other interfaces are synthetic candidates.
#include "bootstrap/interfaces.h"

#include "machine.h"
#include "net_test_util.h"

#include <arpa/inet.h>

#include <vector>

namespace nccom::bootstrap::test {
namespace {

struct ParseCase {
  const char* text;
  bool exclude;
  bool exact;
  std::vector<std::string> names;
};

TEST(BootstrapNetInterfaceFilter, ParseTable) {
  const std::vector<ParseCase> cases = {
      {"", false, false, {}},
      {"   ", false, false, {}},
      {"eth", false, false, {"eth"}},
      {"eth0,ib", false, false, {"eth0", "ib"}},
      {"^docker,lo", true, false, {"docker", "lo"}},
      {"=eth0", false, true, {"eth0"}},
      {"^=eth0,ib", true, true, {"eth0", "ib"}},
      {"  ^= eth0 , ib0  ", true, true, {"eth0", "ib0"}},
      {"eth0,,ib,", false, false, {"eth0", "ib"}},
      {",, ,", false, false, {}},
      {"^", true, false, {}},
  };
  for (const auto& c : cases) {
    const InterfaceFilter f = InterfaceFilter::parse(c.text);
    EXPECT_EQ(f.exclude, c.exclude) << '"' << c.text << '"';
    EXPECT_EQ(f.exact, c.exact) << '"' << c.text << '"';
    EXPECT_EQ(f.names, c.names) << '"' << c.text << '"';
  }
}

TEST(BootstrapNetInterfaceFilter, MatchesTable) {
  struct Case {
    const char* filter;
    const char* name;
    bool expected;
  };
  const Case cases[] = {
      {"eth", "eth0", true},     {"eth", "ib0", false},       {"eth0,ib", "ib1", true},
      {"=eth", "eth0", false},   {"=eth0", "eth0", true},     {"=eth0,ib0", "ib0", true},
      {"^eth", "eth0", false},   {"^eth", "ib0", true},       {"^=eth", "eth0", true},
      {"^=eth0", "eth0", false}, {" eth0 ", "eth0", true},    {"", "anything", true},
      {"eth0", "eth", false},    {"^docker,lo", "lo", false}, {"^docker,lo", "enp5s0", true},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(InterfaceFilter::parse(c.filter).matches(c.name), c.expected)
        << "filter \"" << c.filter << "\" on " << c.name;
  }
}

Interface fake(const char* name, const char* ipv4) {
  auto parsed = SocketAddress::parse(std::string(ipv4) + ":1");
  Interface itf{name, parsed.ok() ? parsed.value() : SocketAddress{}, {}};
  itf.address.set_port(0);
  return itf;
}

std::vector<std::string> names_of(const std::vector<Interface>& list) {
  std::vector<std::string> names;
  for (const auto& itf : list) names.push_back(itf.name);
  return names;
}

TEST(BootstrapNetSelectInterfaces, DefaultRuleSkipsLoopbackAndDocker) {
  const auto lo = fake("lo", "127.0.0.1");
  const auto docker = fake("docker0", "172.17.0.1");
  const auto eth = fake("eth0", "10.0.0.5");
  const auto ib = fake("ib0", "10.1.0.5");
  using Names = std::vector<std::string>;
  EXPECT_EQ(names_of(select_interfaces({lo, docker, eth}, "")), Names{"eth0"});
  EXPECT_EQ(names_of(select_interfaces({ib, lo, eth}, "")), (Names{"ib0", "eth0"}));
  EXPECT_EQ(names_of(select_interfaces({lo}, "")), Names{"lo"});
  EXPECT_EQ(names_of(select_interfaces({lo, docker}, "")), (Names{"lo", "docker0"}));
  EXPECT_EQ(names_of(select_interfaces({lo, docker, eth}, " , ")), Names{"eth0"});
  EXPECT_TRUE(select_interfaces({}, "").empty());
}

TEST(BootstrapNetSelectInterfaces, FilterReplacesDefaultRule) {
  const std::vector<Interface> all = {fake("lo", "127.0.0.1"), fake("docker0", "172.17.0.1"),
                                      fake("eth0", "10.0.0.5"), fake("eth10", "10.0.1.5")};
  using Names = std::vector<std::string>;
  EXPECT_EQ(names_of(select_interfaces(all, "lo")), Names{"lo"});
  EXPECT_EQ(names_of(select_interfaces(all, "eth")), (Names{"eth0", "eth10"}));
  EXPECT_EQ(names_of(select_interfaces(all, "=eth1")), Names{});
  EXPECT_EQ(names_of(select_interfaces(all, "=eth10")), Names{"eth10"});
  EXPECT_EQ(names_of(select_interfaces(all, "^eth")), (Names{"lo", "docker0"}));
  EXPECT_EQ(names_of(select_interfaces(all, "^=eth0,docker0")), (Names{"lo", "eth10"}));
}

TEST(BootstrapNetInterfaces, ListHonoursFamilyAndSkipsLinkLocal) {
  for (const auto& itf : list_interfaces(AF_INET)) {
    EXPECT_EQ(itf.address.family(), AF_INET) << itf.name;
    EXPECT_EQ(itf.address.port(), 0);
    EXPECT_EQ(itf.netmask.family(), AF_INET) << itf.name;
  }
  for (const auto& itf : list_interfaces(AF_INET6)) {
    EXPECT_EQ(itf.address.family(), AF_INET6) << itf.name;
    EXPECT_NE(itf.address.host_string().rfind("fe80", 0), 0u) << itf.name << " is link-local";
  }
  bool found_loopback = false;
  for (const auto& itf : list_interfaces(AF_UNSPEC)) {
    if (itf.address.host_string() == "127.0.0.1") {
      found_loopback = true;
      EXPECT_TRUE(itf.netmask.valid());
    }
  }
  EXPECT_TRUE(found_loopback) << "127.0.0.1 missing from the interface list";
}

TEST(BootstrapNetInterfaces, FilterLoChoosesALoopbackAddress) {
  auto chosen = choose_interface("lo", AF_UNSPEC, SocketAddress{});
  ASSERT_TRUE(chosen.ok()) << chosen.error().message;
  EXPECT_EQ(chosen->name.rfind("lo", 0), 0u);
  EXPECT_TRUE(chosen->address.is_loopback()) << chosen->address.to_string();
}

TEST(BootstrapNetInterfaces, FilterMatchingNothingIsInvalid) {
  auto chosen = choose_interface("=no-such-interface0", AF_INET, SocketAddress{});
  ASSERT_FALSE(chosen.ok());
  EXPECT_EQ(chosen.error().status, NRT_INVALID);
  const std::string& message = chosen.error().message;
  EXPECT_EQ(message.rfind("NET/Socket : No usable listening interface found (filter "
                          "\"=no-such-interface0\", family IPv4",
                          0),
            0u)
      << message;
  EXPECT_NE(message.find("set NCCL_SOCKET_IFNAME or CCOM_SOCKET_IFNAME"), std::string::npos);
}

TEST(BootstrapNetInterfaces, LoopbackRootPicksLoopbackWithoutFilter) {
  auto root = SocketAddress::parse("127.0.0.5:4000");
  ASSERT_TRUE(root.ok());
  auto chosen = choose_interface("", AF_UNSPEC, root.value());
  ASSERT_TRUE(chosen.ok()) << chosen.error().message;
  EXPECT_TRUE(chosen->address.is_loopback()) << chosen->name << " " << chosen->address.to_string();
}

TEST(BootstrapNetInterfaces, Ipv6LoopbackRootPicksIpv6LoopbackWithoutFilter) {
  if (std::string why = nccom_test::machine::ipv6_loopback(); !why.empty())
    NCCOM_SKIP_MACHINE_LACKS(kIpv6Loopback) << why;
  auto root6 = SocketAddress::parse("[::1]:4000");
  ASSERT_TRUE(root6.ok()) << root6.error().message;
  auto chosen6 = choose_interface("", AF_UNSPEC, root6.value());
  ASSERT_TRUE(chosen6.ok()) << chosen6.error().message;
  EXPECT_EQ(chosen6->address.family(), AF_INET6);
  EXPECT_TRUE(chosen6->address.is_loopback()) << chosen6->address.to_string();
}

// Uses the machine's non-loopback IPv4 interfaces: a root elsewhere in one's
// subnet must lead to an interface of that subnet.
TEST(BootstrapNetInterfaces, RootInASubnetPrefersThatSubnet) {
  if (std::string why = nccom_test::machine::ipv4_interface(); !why.empty())
    NCCOM_SKIP_MACHINE_LACKS(kIpv4Interface) << why;
  int tried = 0;
  for (const auto& itf : list_interfaces(AF_INET)) {
    if (itf.address.is_loopback() || !itf.netmask.valid()) continue;
    ++tried;
    in_addr addr{}, mask{};
    ASSERT_EQ(inet_pton(AF_INET, itf.address.host_string().c_str(), &addr), 1);
    ASSERT_EQ(inet_pton(AF_INET, itf.netmask.host_string().c_str(), &mask), 1);
    in_addr other{};
    other.s_addr = (addr.s_addr & mask.s_addr) | (~addr.s_addr & ~mask.s_addr);
    char text[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &other, text, sizeof text);
    auto root = SocketAddress::parse(std::string(text) + ":4000");
    ASSERT_TRUE(root.ok());
    auto chosen = choose_interface("", AF_INET, root.value());
    ASSERT_TRUE(chosen.ok()) << chosen.error().message;
    in_addr got{};
    ASSERT_EQ(inet_pton(AF_INET, chosen->address.host_string().c_str(), &got), 1);
    EXPECT_EQ(got.s_addr & mask.s_addr, addr.s_addr & mask.s_addr)
        << "root " << text << " chose " << chosen->name;
    break;  // one subnet is enough
  }
  EXPECT_EQ(tried, 1) << "this machine has an up IPv4 interface besides loopback, yet "
                         "list_interfaces(AF_INET) lists none with an address and netmask";
}

}  // namespace
}  // namespace nccom::bootstrap::test
