#include "health/port_share.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

namespace nccom::health::engine {
namespace {

constexpr std::string_view kListen = "0A";  // TCP_LISTEN in /proc/net/tcp's "st"

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

bool parse_hex(std::string_view s, uint64_t& value) {
  if (s.empty() || s.size() > 16) return false;
  value = 0;
  for (char c : s) {
    int d = 0;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else {
      return false;
    }
    value = value * 16 + static_cast<uint64_t>(d);
  }
  return true;
}

bool parse_dec(std::string_view s, uint64_t& value) {
  if (s.empty() || s.size() > 19) return false;
  value = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  return true;
}

std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t at = 0;
  while (at < line.size()) {
    while (at < line.size() && line[at] == ' ') ++at;
    const std::size_t end = line.find(' ', at);
    const std::size_t stop = end == std::string_view::npos ? line.size() : end;
    if (stop > at) out.push_back(line.substr(at, stop - at));
    at = stop;
  }
  return out;
}

}  // namespace

// A row: "sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout
// inode ...", local_address being the hex address, ':', the hex port.
std::vector<uint32_t> listener_inodes(std::string_view text, uint16_t port) {
  std::vector<uint32_t> out;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const auto f = fields(text.substr(at, end - at));
    at = end + 1;
    if (f.size() < 10 || f[3] != kListen) continue;
    const std::size_t colon = f[1].rfind(':');
    uint64_t local_port = 0, inode = 0;
    if (colon == std::string_view::npos || !parse_hex(f[1].substr(colon + 1), local_port) ||
        !parse_dec(f[9], inode) || inode == 0 || inode > UINT32_MAX) {
      continue;
    }
    if (local_port == port) out.push_back(static_cast<uint32_t>(inode));
  }
  return out;
}

std::vector<uint32_t> listeners_on(uint16_t port) {
  std::vector<uint32_t> out = listener_inodes(read_text("/proc/net/tcp"), port);
  for (uint32_t inode : listener_inodes(read_text("/proc/net/tcp6"), port)) out.push_back(inode);
  return out;
}

uint32_t socket_inode(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0 || st.st_ino > UINT32_MAX) return 0;
  return static_cast<uint32_t>(st.st_ino);
}

std::map<uint32_t, int> inode_holders(const std::vector<uint32_t>& inodes,
                                      const std::vector<int>& pids) {
  std::map<uint32_t, int> out;
  const std::set<uint32_t> wanted(inodes.begin(), inodes.end());
  if (wanted.empty()) return out;
  std::vector<int> scan = pids;
  if (scan.empty()) {
    if (DIR* proc = opendir("/proc")) {
      while (const dirent* e = readdir(proc)) {
        uint64_t pid = 0;
        if (parse_dec(e->d_name, pid) && pid > 0 && pid < INT32_MAX)
          scan.push_back(static_cast<int>(pid));
      }
      closedir(proc);
    }
  }
  const std::string_view prefix = "socket:[";
  for (int pid : scan) {
    const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
    DIR* fds = opendir(dir.c_str());
    if (fds == nullptr) continue;
    while (const dirent* e = readdir(fds)) {
      if (e->d_name[0] == '.') continue;
      char target[64];
      const std::string link = dir + "/" + e->d_name;
      const ssize_t n = readlink(link.c_str(), target, sizeof target - 1);
      if (n <= static_cast<ssize_t>(prefix.size()) + 1) continue;
      const std::string_view t(target, static_cast<std::size_t>(n));
      uint64_t inode = 0;
      if (t.substr(0, prefix.size()) != prefix || t.back() != ']' ||
          !parse_dec(t.substr(prefix.size(), t.size() - prefix.size() - 1), inode)) {
        continue;
      }
      if (inode <= UINT32_MAX && wanted.count(static_cast<uint32_t>(inode)) != 0)
        out.emplace(static_cast<uint32_t>(inode), pid);
    }
    closedir(fds);
    if (out.size() == wanted.size()) break;
  }
  return out;
}

// /proc/<pid>/stat: "pid (comm) state ppid ..."; the start time is field 22,
// the 20th after the comm's closing parenthesis (the comm may hold spaces).
uint64_t start_ticks(int pid) {
  const std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
  const std::size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return 0;
  const auto f = fields(std::string_view(stat).substr(paren + 1));
  uint64_t ticks = 0;
  if (f.size() < 20 || !parse_dec(f[19], ticks)) return 0;
  return ticks;
}

bool Seniority::operator<(const Seniority& other) const {
  if (ticks != other.ticks) return ticks < other.ticks;
  return pid < other.pid;
}

Seniority seniority(const std::vector<int>& pids) {
  Seniority best;
  bool any = false;
  for (int pid : pids) {
    const Seniority s{start_ticks(pid), pid};
    if (!any || s < best) best = s;
    any = true;
  }
  return best;
}

}  // namespace nccom::health::engine
