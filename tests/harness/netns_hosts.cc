#include "netns_hosts.h"

#include "child_process.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <sstream>

namespace nccom_test {
namespace {

constexpr const char* kPrefix = "nccomt";  // nccomt<pid>x<seq>h<i> / ...sw

std::string ip_binary() {
  for (const char* p : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"}) {
    if (::access(p, X_OK) == 0) return p;
  }
  return "";
}

// Runs `ip ARGS`; "" on success, else what failed and what ip said.
std::string ip(const std::vector<std::string>& args) {
  const ChildResult r = run_child(ip_binary(), args, {});
  if (r.exit_code == 0) return "";
  std::string line = "ip";
  for (const std::string& a : args) line += " " + a;
  return line + " failed (exit " + std::to_string(r.exit_code) + "): " + r.err;
}

// The pid in a name of this scheme, or -1.
long owner_of(const std::string& ns) {
  if (ns.rfind(kPrefix, 0) != 0) return -1;
  const std::string rest = ns.substr(std::string(kPrefix).size());
  const std::size_t x = rest.find('x');
  if (x == std::string::npos || x == 0) return -1;
  const std::string digits = rest.substr(0, x);
  char* end = nullptr;
  const long pid = std::strtol(digits.c_str(), &end, 10);
  return end != nullptr && *end == '\0' ? pid : -1;
}

void remove_stale() {
  for (const std::string& ns : list_netns()) {
    const long pid = owner_of(ns);
    if (pid <= 0 || pid == static_cast<long>(::getpid())) continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) (void)ip({"netns", "del", ns});
  }
}

}  // namespace

std::vector<std::string> list_netns() {
  std::vector<std::string> out;
  if (ip_binary().empty()) return out;
  const ChildResult r = run_child(ip_binary(), {"netns", "list"}, {});
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    const std::size_t space = line.find(' ');  // "name (id: 3)"
    if (!line.empty()) out.push_back(line.substr(0, space));
  }
  return out;
}

std::string NetnsHosts::address(int host, int network) {
  return "10." + std::to_string(90 + network) + ".0." + std::to_string(host + 1);
}

std::unique_ptr<NetnsHosts> NetnsHosts::create(int hosts, std::string* why) {
  if (::geteuid() != 0) {
    *why = "network namespaces need root";
    return nullptr;
  }
  if (ip_binary().empty()) {
    *why = "no `ip` command (apt-get install iproute2)";
    return nullptr;
  }
  if (hosts < 1 || hosts > 32) {
    *why = "1..32 hosts, not " + std::to_string(hosts);
    return nullptr;
  }
  remove_stale();
  static std::atomic<int> seq{0};
  const std::string stem =
      std::string(kPrefix) + std::to_string(::getpid()) + "x" + std::to_string(seq++);
  std::unique_ptr<NetnsHosts> made(new NetnsHosts);
  auto fail = [&](const std::string& what) {
    *why = what;
    return nullptr;  // `made` deletes what was created so far
  };
  made->switch_ = stem + "sw";
  if (std::string e = ip({"netns", "add", made->switch_}); !e.empty()) {
    made->switch_.clear();
    return fail(e);
  }
  for (int n = 0; n < kNetworks; ++n) {
    const std::string br = "br" + std::to_string(n);
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"-n", made->switch_, "link", "add", br, "type", "bridge"},
             {"-n", made->switch_, "link", "set", br, "up"}}) {
      if (std::string e = ip(args); !e.empty()) return fail(e);
    }
  }
  for (int h = 0; h < hosts; ++h) {
    const std::string ns = stem + "h" + std::to_string(h);
    if (std::string e = ip({"netns", "add", ns}); !e.empty()) return fail(e);
    made->hosts_.push_back(ns);
    if (std::string e = ip({"-n", ns, "link", "set", "lo", "up"}); !e.empty()) return fail(e);
    for (int n = 0; n < kNetworks; ++n) {
      const std::string port = "h" + std::to_string(h) + "n" + std::to_string(n);
      for (const auto& args : std::vector<std::vector<std::string>>{
               {"link", "add", "name", kInterface[n], "netns", ns, "type", "veth", "peer", "name",
                port, "netns", made->switch_},
               {"-n", made->switch_, "link", "set", port, "master", "br" + std::to_string(n)},
               {"-n", made->switch_, "link", "set", port, "up"},
               {"-n", ns, "addr", "add", address(h, n) + "/24", "dev", kInterface[n]},
               {"-n", ns, "link", "set", kInterface[n], "up"}}) {
        if (std::string e = ip(args); !e.empty()) return fail(e);
      }
    }
  }
  return made;
}

NetnsHosts::~NetnsHosts() {
  for (const std::string& ns : namespaces()) (void)ip({"netns", "del", ns});
}

std::vector<std::string> NetnsHosts::exec_prefix(int host) const {
  return {ip_binary(), "netns", "exec", name(host)};
}

std::vector<std::string> NetnsHosts::namespaces() const {
  std::vector<std::string> out = hosts_;
  if (!switch_.empty()) out.push_back(switch_);
  return out;
}

}  // namespace nccom_test
