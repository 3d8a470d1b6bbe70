#include "sysfs_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace nccom::topo_nccl {
namespace {

// Closes the descriptor on every path out.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string errnoText(int err) {
  if (err == ELOOP) return "symlink loop (" + std::string(std::strerror(err)) + ")";
  return std::strerror(err);
}

// Opens `path` for reading without ever blocking (a FIFO would block a plain
// open) and checks that it is a regular file. *absent is set for ENOENT and
// ENOTDIR, and the returned Fd is then invalid.
Result<int> openRegular(const std::string& path, bool* absent) {
  *absent = false;
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) {
      *absent = true;
      return -1;
    }
    return make_error(NRT_FAILURE, "cannot open " + path + ": " + errnoText(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return make_error(NRT_FAILURE, "cannot stat " + path + ": " + errnoText(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error(NRT_FAILURE, path + " is not a regular file (sysfs attributes are)");
  }
  return fd;
}

// Reads until EOF, `stop` (if not empty) or more than `maxBytes`.
Result<std::string> readBounded(int fd, const std::string& path, std::size_t maxBytes,
                                std::string_view stop, bool* tooLarge) {
  std::string text;
  char buffer[4096];
  *tooLarge = false;
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error(NRT_FAILURE, "cannot read " + path + ": " + errnoText(errno));
    }
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    if (!stop.empty()) {
      const auto at = text.find(stop);
      if (at != std::string::npos && at + stop.size() <= maxBytes) {
        text.resize(at + stop.size());
        return text;
      }
    }
    if (text.size() > maxBytes) {
      *tooLarge = true;
      text.resize(maxBytes);
      return text;
    }
  }
  return text;
}

void trimRight(std::string& text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\t' ||
                           text.back() == '\r' || text.back() == '\0'))
    text.pop_back();
}

bool isHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool isDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

Result<std::optional<std::string>> readAttribute(const std::string& path, std::size_t maxBytes) {
  bool absent = false;
  Result<int> fd = openRegular(path, &absent);
  if (!fd) return fd.take_error();
  if (absent) return std::optional<std::string>{};
  Fd guard(*fd);
  bool tooLarge = false;
  Result<std::string> text = readBounded(guard.get(), path, maxBytes, {}, &tooLarge);
  if (!text) return text.take_error();
  if (tooLarge)
    return make_error(NRT_FAILURE, path + " holds more than " + std::to_string(maxBytes) +
                                       " bytes (a sysfs attribute never does)");
  trimRight(*text);
  return std::optional<std::string>(std::move(*text));
}

Result<std::string> readFirstBlock(const std::string& path, std::size_t maxBytes) {
  bool absent = false;
  Result<int> fd = openRegular(path, &absent);
  if (!fd) return fd.take_error();
  if (absent) return make_error(NRT_FAILURE, "cannot open " + path + ": no such file");
  Fd guard(*fd);
  bool tooLarge = false;
  Result<std::string> text = readBounded(guard.get(), path, maxBytes, "\n\n", &tooLarge);
  if (!text) return text.take_error();
  if (tooLarge)
    return make_error(NRT_FAILURE, path + ": no empty line within the first " +
                                       std::to_string(maxBytes) + " bytes");
  return text;
}

bool isHexId(std::string_view text, int digits) {
  if (text.size() != static_cast<std::size_t>(digits) + 2 || text.substr(0, 2) != "0x")
    return false;
  for (char c : text.substr(2))
    if (!isHex(c)) return false;
  return true;
}

bool isBusId(std::string_view text) {
  // domain ':' bus(2) ':' device(2) '.' function(1)
  const auto colon = text.find(':');
  if (colon == std::string_view::npos || colon < 4 || colon > 8) return false;
  for (std::size_t i = 0; i < colon; ++i)
    if (!isHex(text[i])) return false;
  const std::string_view rest = text.substr(colon);
  if (rest.size() != 8 || rest[0] != ':' || rest[3] != ':' || rest[6] != '.') return false;
  if (!isHex(rest[1]) || !isHex(rest[2]) || !isHex(rest[4]) || !isHex(rest[5])) return false;
  return rest[7] >= '0' && rest[7] <= '7';
}

std::optional<long> parseDecimal(std::string_view text, long min, long max) {
  std::size_t i = 0;
  bool negative = false;
  if (i < text.size() && text[i] == '-') {
    negative = true;
    ++i;
  }
  if (i == text.size() || text.size() - i > 9) return std::nullopt;  // also bounds the value
  long value = 0;
  for (; i < text.size(); ++i) {
    if (!isDigit(text[i])) return std::nullopt;
    value = value * 10 + (text[i] - '0');
  }
  if (negative) value = -value;
  if (value < min || value > max) return std::nullopt;
  return value;
}

bool isCpuList(std::string_view text) {
  if (text.empty()) return true;  // a memory-only NUMA node has no CPUs
  std::size_t i = 0;
  while (true) {
    auto number = [&]() {
      const std::size_t start = i;
      while (i < text.size() && isDigit(text[i])) ++i;
      return i > start && i - start <= 7;
    };
    if (!number()) return false;
    if (i < text.size() && text[i] == '-') {
      ++i;
      if (!number()) return false;
    }
    if (i == text.size()) return true;
    if (text[i] != ',') return false;
    ++i;
  }
}

bool isCpuMask(std::string_view text) {
  std::size_t group = 0;
  if (text.empty()) return false;
  for (char c : text) {
    if (c == ',') {
      if (group == 0) return false;
      group = 0;
    } else if (isHex(c) && group < 8) {
      ++group;
    } else {
      return false;
    }
  }
  return group > 0;
}

bool isPrintableText(std::string_view text, std::size_t maxLength) {
  if (text.empty() || text.size() > maxLength) return false;
  for (char c : text)
    if (c < 0x20 || c > 0x7e) return false;
  return true;
}

std::string quoteForMessage(std::string_view text) {
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size() && i < 40; ++i)
    out += (text[i] >= 0x20 && text[i] <= 0x7e) ? text[i] : '?';
  if (text.size() > 40) out += "...";
  return out + "\"";
}

}  // namespace nccom::topo_nccl
