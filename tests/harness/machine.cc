#include "machine.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace nccom_test::machine {
namespace {

constexpr std::array<std::string_view, 8> kNames = {
    "root",    "network-namespaces", "ipv6-loopback", "ipv4-interface", "libfabric-provider",
    "program", "mount-namespaces",   "cgroups",
};

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

}  // namespace

std::string_view name(Lack lack) { return kNames.at(static_cast<std::size_t>(lack)); }

const std::string_view* all_names(std::size_t* count) {
  *count = kNames.size();
  return kNames.data();
}

std::string skip_prefix(Lack lack) { return "machine lacks " + std::string(name(lack)) + ": "; }

std::string root() {
  return ::geteuid() == 0 ? "" : "the test needs root (euid " + std::to_string(::geteuid()) + ")";
}

std::string network_namespaces() {
  if (std::string why = root(); !why.empty()) return why;
  // In a child, so this process keeps its own namespace.
  const pid_t pid = ::fork();
  if (pid < 0) return errno_text("fork");
  if (pid == 0) ::_exit(::unshare(CLONE_NEWNET) == 0 ? 0 : errno);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  const int err = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
  return std::string("unshare(CLONE_NEWNET) is refused here") +
         (err != 0 ? std::string(": ") + std::strerror(err) : std::string());
}

std::string mount_namespaces() {
  if (std::string why = root(); !why.empty()) return why;
  // In a child, so this process keeps its own mounts.
  const pid_t pid = ::fork();
  if (pid < 0) return errno_text("fork");
  if (pid == 0) {
    if (::unshare(CLONE_NEWNS) != 0) ::_exit(1);
    if (::mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) ::_exit(2);
    ::_exit(::mount("tmpfs", "/dev/shm", "tmpfs", 0, "size=1m") == 0 ? 0 : 3);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  const int step = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
  return step == 1   ? "unshare(CLONE_NEWNS) is refused here"
         : step == 2 ? "making / private in a new mount namespace is refused here"
                     : "mounting a tmpfs on /dev/shm in a new mount namespace is refused here";
}

std::string cgroups() {
  std::ifstream mounts("/proc/self/mounts");
  if (!mounts) return "/proc/self/mounts cannot be read";
  // "<source> <mount point> <type> ...": a cgroup or cgroup2 file system
  // mounted at /sys/fs/cgroup or below it.
  for (std::string source, point, type, rest; mounts >> source >> point >> type;) {
    std::getline(mounts, rest);
    if ((type == "cgroup" || type == "cgroup2") && point.rfind("/sys/fs/cgroup", 0) == 0) return "";
  }
  return "no cgroup file system is mounted under /sys/fs/cgroup (slurmd will not start without "
         "one)";
}

std::string ipv6_loopback() {
  const int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno_text("socket(AF_INET6)");
  sockaddr_in6 addr{};
  addr.sin6_family = AF_INET6;
  addr.sin6_addr = in6addr_loopback;
  const int rc = ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  std::string why = rc == 0 ? "" : errno_text("bind [::1]:0");
  ::close(fd);
  return why;
}

std::string ipv4_interface() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return errno_text("getifaddrs");
  bool found = false;
  for (const ifaddrs* i = list; i != nullptr && !found; i = i->ifa_next)
    found = i->ifa_addr != nullptr && i->ifa_addr->sa_family == AF_INET &&
            (i->ifa_flags & IFF_UP) != 0 && (i->ifa_flags & IFF_LOOPBACK) == 0;
  ::freeifaddrs(list);
  return found ? "" : "no IPv4 interface is up besides loopback";
}

std::string program(const std::string& name) {
  if (name.find('/') != std::string::npos)
    return ::access(name.c_str(), X_OK) == 0 ? "" : name + " is not installed";
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = dirs.substr(start, end - start);
    if (!dir.empty() && ::access((dir + "/" + name).c_str(), X_OK) == 0) return "";
    start = end + 1;
  }
  return name + " is not on PATH";
}

}  // namespace nccom_test::machine
