#include "health/job_registry.h"

#include "health/port_share.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <mutex>

namespace nccom::health::registry {
namespace {

constexpr std::size_t kMaxCommand = 200;

std::mutex g_mu;
std::string g_written;  // the file this process wrote, "" when none

// When `pid` started (engine::start_ticks), which with the pid names one
// process for as long as the host runs; "" for a process that is gone or has
// exited (a zombie, state Z, whose parent has not reaped it yet).
std::string start_time(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t close = stat.rfind(')');  // the command may hold spaces and parentheses
  if (close == std::string::npos || close + 2 >= stat.size()) return {};
  const char state = stat[close + 2];
  if (state == 'Z' || state == 'X') return {};
  const uint64_t ticks = engine::start_ticks(pid);
  return ticks == 0 ? std::string() : std::to_string(ticks);
}

std::string own_command() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string out;
  for (char c : raw) {
    if (out.size() >= kMaxCommand) break;
    out += c == '\0' ? ' ' : (std::isprint(static_cast<unsigned char>(c)) ? c : '?');
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string now_text() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char text[32];
  std::strftime(text, sizeof text, "%F %T", &local);
  return text;
}

std::map<std::string, std::string> read_entry(const std::string& path) {
  std::map<std::string, std::string> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const std::size_t eq = line.find('=');
    if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return out;
}

}  // namespace

std::string directory(std::string* why) {
  std::string dir;
  if (const char* set = std::getenv("NCCOM_RAS_REGISTRY"); set != nullptr && *set != '\0') {
    if (std::strcmp(set, "none") == 0) {
      if (why != nullptr) *why = "NCCOM_RAS_REGISTRY is none";
      return {};
    }
    dir = set;
  } else {
    const char* tmp = std::getenv("TMPDIR");
    dir = std::string(tmp != nullptr && *tmp == '/' ? tmp : "/tmp") + "/nccom-ras-" +
          std::to_string(getuid());
  }
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    if (why != nullptr) *why = "cannot make " + dir + ": " + std::strerror(errno);
    return {};
  }
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid()) {
    if (why != nullptr) *why = dir + " is not a directory of this user";
    return {};
  }
  return dir;
}

std::string publish(const std::string& address) {
  std::string why;
  const std::string dir = directory(&why);
  if (dir.empty()) return why;
  const int pid = static_cast<int>(getpid());
  const std::string path = dir + "/" + std::to_string(pid);
  const std::string tmp = path + ".new";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << "address=" << address << "\npid=" << pid << "\nstart=" << start_time(pid)
        << "\nstarted=" << now_text() << "\ncommand=" << own_command() << "\n";
    if (!out) return "cannot write " + tmp;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string error = std::strerror(errno);
    std::remove(tmp.c_str());
    return "cannot write " + path + ": " + error;
  }
  std::lock_guard lock(g_mu);
  g_written = path;
  return {};
}

void withdraw() {
  std::lock_guard lock(g_mu);
  if (g_written.empty()) return;
  // Only the process that wrote it removes it (a forked child inherits the
  // name, not the entry).
  if (g_written.substr(g_written.rfind('/') + 1) == std::to_string(getpid())) {
    std::remove(g_written.c_str());
  }
  g_written.clear();
}

std::vector<Entry> live_entries(const std::string& dir) {
  std::vector<Entry> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    const std::string path = dir + "/" + name;
    auto fields = read_entry(path);
    Entry entry;
    entry.pid = std::atoi(name.c_str());
    entry.address = fields["address"];
    entry.started = fields["started"];
    entry.command = fields["command"];
    const std::string recorded = fields["start"];
    if (recorded.empty() || start_time(entry.pid) != recorded || entry.address.empty()) {
      struct stat st {};
      if (stat(path.c_str(), &st) == 0 && st.st_uid == getuid()) std::remove(path.c_str());
      continue;
    }
    out.push_back(std::move(entry));
  }
  closedir(d);
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) {
    return a.address != b.address ? a.address < b.address : a.pid < b.pid;
  });
  return out;
}

}  // namespace nccom::health::registry
