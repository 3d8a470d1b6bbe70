// nccom::read_bounded_file — how the host and its tools read a file a user
// names (the configuration file, topology and graph XML).
//
// Only a regular file of bounded size is read. The path is opened with
// O_NONBLOCK, so a FIFO without a writer does not block in open, and the
// opened descriptor is fstat'ed: a FIFO, a device such as /dev/zero, a
// directory or a socket is refused by its kind before anything is read. A
// file larger than the bound is refused by its size, and the bound holds
// while reading too (a file that grows meanwhile, or a /proc file whose size
// reads as 0). Header-only: used by static libraries and plugins alike.
#pragma once

#include <nccom/util/result.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace nccom {

// "a FIFO", "a character device", ... for the messages below.
inline const char* file_kind(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "a file of unknown type";
}

// "4194304 bytes (4 MiB)", or "1000 bytes".
inline std::string byte_count(std::uint64_t bytes) {
  std::string text = std::to_string(bytes) + " bytes";
  constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
  if (bytes >= kMiB && bytes % kMiB == 0) text += " (" + std::to_string(bytes / kMiB) + " MiB)";
  return text;
}

// The whole content of the regular file `path`, at most `max_bytes` long.
// `subject` names the file in messages, origin included, e.g.
// "configuration file /x.toml (from NCCOM_CONFIG)". Every error is `status`
// with a message "cannot read <subject>: <why>[; <what to do>]".
inline Result<std::string> read_bounded_file(const std::string& path, std::size_t max_bytes,
                                             const std::string& subject,
                                             NRT_STATUS status = NRT_INVALID) {
  const std::string prefix = "cannot read " + subject + ": ";
  auto not_regular = [&](mode_t mode) {
    return make_error(status, prefix + "it is " + file_kind(mode) +
                                  ", not a regular file; give the path of a regular file");
  };
  struct stat st {};
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    // A socket cannot be opened at all (ENXIO); its kind says more than that.
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return not_regular(st.st_mode);
    return make_error(status, prefix + std::strerror(err));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (::fstat(fd, &st) != 0) return make_error(status, prefix + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return not_regular(st.st_mode);
  const std::string limit = "the limit of " + byte_count(max_bytes);
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    return make_error(status, prefix + "it is " +
                                  byte_count(static_cast<std::uint64_t>(st.st_size)) + ", over " +
                                  limit + "; check that the path names the intended file");
  }
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error(status, prefix + std::strerror(errno));
    if (n == 0) break;
    if (static_cast<std::size_t>(n) > max_bytes - text.size()) {
      return make_error(status, prefix + "it holds more than " + limit +
                                    " (it grew while being read, or does not report its size); "
                                    "check that the path names the intended file");
    }
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

}  // namespace nccom
