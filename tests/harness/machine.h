// Skips are for machines, failures are for the product.
//
// A test may skip only through NCCOM_SKIP_MACHINE_LACKS, naming one of the
// reasons below: something this machine lacks that the test needs (root,
// network namespaces, a libfabric provider, a program). The reason is found
// out here, by asking the machine directly (a syscall, a socket, fi_getinfo
// in machine_fabric.h, a look along PATH), never by asking the code under
// test: when nccom itself fails to load a plugin, list a device or bind a
// socket, the test fails and says so.
//
// Every skip prints "machine lacks <reason>: <detail>"; scripts/test.sh
// groups the skips of a run by reason and fails the run on a skip whose
// reason is not in this list (docs/testing.md lists them, with how many
// skip on each kind of machine).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace nccom_test::machine {

enum class Lack {
  kRoot,               // the test needs root (network namespaces, Slurm daemons)
  kNetworkNamespaces,  // root, but `unshare(CLONE_NEWNET)` is refused (a container)
  kIpv6Loopback,       // no ::1 to bind (IPv6 disabled)
  kIpv4Interface,      // no IPv4 interface besides loopback
  kLibfabricProvider,  // this libfabric has no such provider, or it lacks what the test needs
  kProgram,            // a program the test runs is not installed (dot, mpirun, slurmd)
  kMountNamespaces,    // root, but a private mount namespace with a tmpfs is refused
  kCgroups,            // no cgroup file system under /sys/fs/cgroup (slurmd needs one)
};

// The reason's name as printed ("root", "network-namespaces", ...).
std::string_view name(Lack lack);
// Every reason's name, in the order of the enum.
const std::string_view* all_names(std::size_t* count);
// "machine lacks <name>: " — what NCCOM_SKIP_MACHINE_LACKS prints first.
std::string skip_prefix(Lack lack);

// Probes. Each returns "" when the machine has the thing, else why not.
std::string root();                            // geteuid() == 0
std::string network_namespaces();              // root, and a child may unshare(CLONE_NEWNET)
std::string ipv6_loopback();                   // a TCP socket binds [::1]:0
std::string ipv4_interface();                  // an up IPv4 interface other than loopback
std::string program(const std::string& name);  // `name` is an executable on PATH (or a path)
// root, and a child may unshare(CLONE_NEWNS) and mount a tmpfs on /dev/shm there
std::string mount_namespaces();
// a cgroup (v1 or v2) file system is mounted at or under /sys/fs/cgroup
std::string cgroups();

}  // namespace nccom_test::machine

// Skips the current test, naming what this machine lacks; stream the detail:
//   if (auto why = machine::ipv6_loopback(); !why.empty())
//     NCCOM_SKIP_MACHINE_LACKS(kIpv6Loopback) << why;
#define NCCOM_SKIP_MACHINE_LACKS(lack) \
  GTEST_SKIP() << ::nccom_test::machine::skip_prefix(::nccom_test::machine::Lack::lack)

namespace nccom_test::machine {

// Skips the calling test when this machine cannot make network namespaces:
// not root, or unshare(CLONE_NEWNET) refused. The caller returns when
// IsSkipped(); after that, a namespace that cannot be made fails the test.
inline void skip_unless_network_namespaces() {
  if (std::string why = root(); !why.empty()) NCCOM_SKIP_MACHINE_LACKS(kRoot) << why;
  if (std::string why = network_namespaces(); !why.empty())
    NCCOM_SKIP_MACHINE_LACKS(kNetworkNamespaces) << why;
}

}  // namespace nccom_test::machine
