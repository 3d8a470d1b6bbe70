#include "shm_room.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace nccom::ofi::shm_room {
namespace {

constexpr const char* kPrefix = "fi_shm://";
// What libfabric 1.17's shm provider makes with its default queue sizes;
// replaced by the real size once this process has made a region.
std::atomic<uint64_t> g_region_bytes{16ull << 20};

std::string mib(uint64_t bytes) {
  char text[48];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return text;
}

// "nc<hex pid>.<hex>" -> the pid; 0 when the name is not of that form.
pid_t pid_of(const char* name) {
  if (std::strncmp(name, "nc", 2) != 0) return 0;
  char* end = nullptr;
  errno = 0;
  const unsigned long pid = std::strtoul(name + 2, &end, 16);
  if (errno != 0 || end == name + 2 || *end != '.' || pid == 0 || pid > 0x3fffffff) return 0;
  const char* rest = end + 1;
  if (*rest == '\0') return 0;
  for (const char* c = rest; *c != '\0'; ++c) {
    if (std::strchr("0123456789abcdef", *c) == nullptr) return 0;
  }
  return static_cast<pid_t>(pid);
}

// The free and total bytes of `dir`'s file system; false (errno set) when
// it cannot be read.
bool room_of(const std::string& dir, uint64_t* free_bytes, uint64_t* total_bytes) {
  struct statvfs fs {};
  if (::statvfs(dir.c_str(), &fs) != 0) return false;
  *free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  *total_bytes = static_cast<uint64_t>(fs.f_blocks) * fs.f_frsize;
  return true;
}

}  // namespace

std::string region_file(const std::string& fi_name, const std::string& dir) {
  const std::size_t prefix = std::strlen(kPrefix);
  if (fi_name.compare(0, prefix, kPrefix) != 0) return "";
  const std::string name = fi_name.substr(prefix);
  if (name.empty() || name.find('/') != std::string::npos) return "";
  return dir + "/" + name;
}

std::string room_text(const std::string& dir) {
  uint64_t free_bytes = 0, total_bytes = 0;
  if (!room_of(dir, &free_bytes, &total_bytes))
    return std::string("unreadable: ") + std::strerror(errno);
  return mib(free_bytes) + " free of " + mib(total_bytes);
}

Status check_room(const std::string& dir) {
  uint64_t free_bytes = 0, total_bytes = 0;
  if (!room_of(dir, &free_bytes, &total_bytes)) {
    OFI_WARN("NET/OFI libfabric's shm provider keeps its queues in %s, which cannot be read: %s",
             dir.c_str(), std::strerror(errno));
    return ncclSystemError;
  }
  const uint64_t wanted = g_region_bytes.load();
  if (free_bytes >= wanted) return ncclSuccess;
  OFI_WARN(
      "NET/OFI libfabric's shm provider needs %s in %s for this endpoint's queues, and %s has "
      "%s free of %s: free room there (or mount it larger), or choose another provider "
      "(FI_PROVIDER)",
      mib(wanted).c_str(), dir.c_str(), dir.c_str(), mib(free_bytes).c_str(),
      mib(total_bytes).c_str());
  return ncclSystemError;
}

Status reserve(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    OFI_INFO(NCCL_NET,
             "NET/OFI shm region %s not found (%s): its room is not reserved ahead; a full "
             "/dev/shm can then stop this process with SIGBUS",
             path.c_str(), std::strerror(errno));
    return ncclSuccess;
  }
  struct stat st {};
  int rc = ::fstat(fd, &st) == 0 ? 0 : errno;
  if (rc == 0 && st.st_size > 0) rc = ::posix_fallocate(fd, 0, st.st_size);
  ::close(fd);
  if (rc != 0) {
    OFI_WARN(
        "NET/OFI libfabric's shm provider made a region of %s in %s (%s) that cannot be reserved: "
        "%s; free room there (or mount it larger), or choose another provider (FI_PROVIDER)",
        mib(static_cast<uint64_t>(st.st_size)).c_str(), "/dev/shm", path.c_str(),
        std::strerror(rc));
    return ncclSystemError;
  }
  g_region_bytes.store(static_cast<uint64_t>(st.st_size));
  return ncclSuccess;
}

int sweep_dead(const std::string& dir) {
  static std::once_flag once;
  int removed = 0;
  std::call_once(once, [&] {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return;
    const uid_t me = ::geteuid();
    while (const dirent* e = ::readdir(d)) {
      const pid_t pid = pid_of(e->d_name);
      if (pid == 0 || pid == ::getpid()) continue;
      if (::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
      struct stat st {};
      if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
          st.st_uid != me) {
        continue;
      }
      if (::unlinkat(::dirfd(d), e->d_name, 0) == 0) {
        ++removed;
        OFI_INFO(NCCL_NET, "NET/OFI removed %s/%s, an shm region of process %d, which is gone",
                 dir.c_str(), e->d_name, static_cast<int>(pid));
      }
    }
    ::closedir(d);
  });
  return removed;
}

}  // namespace nccom::ofi::shm_room
