// netns_run — a private network namespace for one test command, and its
// loopback switched off and on from outside: the network partition of the
// fault tests, without iproute2.
//
//   netns_run -- PROGRAM ARGS...          new network namespace, lo up, exec PROGRAM
//   netns_run --lo-down -- PROGRAM ARGS... the same with lo left down (no network at all)
//   netns_run --lo down|up PID            switch lo in PID's network namespace
//   netns_run --in PID -- PROGRAM ARGS... exec PROGRAM in PID's network namespace
//                                         (more processes of one emulated network)
//
// The namespace lives as long as its processes: nothing to delete. Needs
// CAP_SYS_ADMIN (root); exits 77 with a message when it is missing, so that
// a test can skip.
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

constexpr int kNoPrivilege = 77;

bool set_loopback(bool up) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  bool ok = ::ioctl(fd, SIOCGIFFLAGS, &ifr) == 0;
  if (ok) {
    ifr.ifr_flags = static_cast<short>(up ? (ifr.ifr_flags | IFF_UP) : (ifr.ifr_flags & ~IFF_UP));
    ok = ::ioctl(fd, SIOCSIFFLAGS, &ifr) == 0;
  }
  const int saved = errno;
  ::close(fd);
  errno = saved;
  return ok;
}

int usage() {
  std::fprintf(stderr,
               "usage: netns_run [--lo-down] -- PROGRAM ARGS... | netns_run --lo down|up PID | "
               "netns_run --in PID -- PROGRAM ARGS...\n");
  return 2;
}

// Joins PID's network namespace: 0, or the exit code to return.
int enter_namespace_of(const char* pid) {
  const std::string ns = std::string("/proc/") + pid + "/ns/net";
  const int fd = ::open(ns.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    std::fprintf(stderr, "netns_run: %s: %s\n", ns.c_str(), std::strerror(errno));
    return 1;
  }
  if (::setns(fd, CLONE_NEWNET) != 0) {
    const int err = errno;
    std::fprintf(stderr, "netns_run: setns %s: %s\n", ns.c_str(), std::strerror(err));
    ::close(fd);
    return err == EPERM ? kNoPrivilege : 1;
  }
  ::close(fd);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool start_up = true;
  if (argc >= 4 && std::strcmp(argv[1], "--lo-down") == 0) {
    start_up = false;
    ++argv;
    --argc;
  }
  if (argc >= 3 && std::strcmp(argv[1], "--") == 0) {
    if (::unshare(CLONE_NEWNET) != 0) {
      std::fprintf(stderr, "netns_run: unshare(CLONE_NEWNET): %s\n", std::strerror(errno));
      return errno == EPERM ? kNoPrivilege : 1;
    }
    if (start_up && !set_loopback(true)) {
      std::fprintf(stderr, "netns_run: lo up: %s\n", std::strerror(errno));
      return 1;
    }
    ::execv(argv[2], argv + 2);
    std::fprintf(stderr, "netns_run: exec %s: %s\n", argv[2], std::strerror(errno));
    return 127;
  }
  if (argc == 4 && std::strcmp(argv[1], "--lo") == 0) {
    const bool up = std::strcmp(argv[2], "up") == 0;
    if (!up && std::strcmp(argv[2], "down") != 0) return usage();
    if (const int rc = enter_namespace_of(argv[3]); rc != 0) return rc;
    if (!set_loopback(up)) {
      std::fprintf(stderr, "netns_run: lo %s: %s\n", argv[2], std::strerror(errno));
      return 1;
    }
    return 0;
  }
  if (argc >= 5 && std::strcmp(argv[1], "--in") == 0 && std::strcmp(argv[3], "--") == 0) {
    if (const int rc = enter_namespace_of(argv[2]); rc != 0) return rc;
    ::execv(argv[4], argv + 4);
    std::fprintf(stderr, "netns_run: exec %s: %s\n", argv[4], std::strerror(errno));
    return 127;
  }
  return usage();
}
