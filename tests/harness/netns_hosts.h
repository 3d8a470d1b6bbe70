// Hosts for tests that need ranks on different addresses: each host a network
// namespace of its own with two interfaces, nic0 on network 0 and nic1 on
// network 1, each network a bridge in a switch namespace of its own. Nothing
// is added to the namespace the tests run in: the veth pairs are created
// straight between the host and the switch namespaces.
//
// Every namespace is deleted when the object goes (with it, its interfaces),
// also when a test fails; namespaces of this scheme left by a process that
// no longer exists (a test that was killed) are deleted by the next create().
// Needs root and iproute2's `ip`; create() says why it cannot otherwise, so
// that a test can skip.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace nccom_test {

class NetnsHosts {
 public:
  static constexpr int kNetworks = 2;
  static constexpr const char* kInterface[kNetworks] = {"nic0", "nic1"};

  // `hosts` hosts (1..32), or nullptr with the reason in *why.
  static std::unique_ptr<NetnsHosts> create(int hosts, std::string* why);
  ~NetnsHosts();
  NetnsHosts(const NetnsHosts&) = delete;
  NetnsHosts& operator=(const NetnsHosts&) = delete;

  int size() const { return static_cast<int>(hosts_.size()); }
  const std::string& name(int host) const { return hosts_[static_cast<std::size_t>(host)]; }
  // "10.90.0.1" (network 0) / "10.91.0.1" (network 1) for host 0, and so on.
  static std::string address(int host, int network);
  // The argv prefix that runs a program in a host's namespace.
  std::vector<std::string> exec_prefix(int host) const;
  // Every namespace this object made (hosts and switch).
  std::vector<std::string> namespaces() const;

 private:
  NetnsHosts() = default;
  std::string switch_;
  std::vector<std::string> hosts_;
};

// The namespaces `ip netns list` shows.
std::vector<std::string> list_netns();

}  // namespace nccom_test
