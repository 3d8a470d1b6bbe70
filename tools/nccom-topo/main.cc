// nccom-topo: the topology, rings and NIC binding nccom would build for a
// platform and cluster size, computed through the real topology plugins
// without the hardware, under the configuration libnccom would read here
// (options that change a knob stand in for its environment variable). See
// README.md next to this file.
//
// Exit status: 0 success, 1 a request nccom cannot serve (the one line on
// stderr says why), 2 a usage error.
#include "config/config.h"
#include "log/log.h"
#include "render.h"
#include "topo_tool.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace {

using nccom::topotool::ToolRequest;

constexpr const char* kUsage =
    "usage: nccom-topo --platform P --nodes N [--devices D] [--lnc 1|2] [--ranks-per-node R]\n"
    "                  [--config FILE] [--cluster NAME] [--algorithm auto|new|old]\n"
    "                  [--topo-file F] [--plugins LIST] [--rank R] [--xml OUT]\n"
    "                  [--graph-xml OUT] [--dot OUT] [--svg OUT] [--png OUT] [--json]\n";

struct Options {
  ToolRequest req;
  std::string xml, graph_xml, dot, svg, png;
  // Options that stand in for the configuration's environment variables.
  std::string config, cluster, algorithm, topo_file, plugins;
  std::vector<nccom::topotool::OptionOverride> overrides;
  bool json = false;
};

int usage(const std::string& why) {
  std::fprintf(stderr, "nccom-topo: %s\n%s", why.c_str(), kUsage);
  return 2;
}

int fail(const std::string& why) {
  std::fprintf(stderr, "nccom-topo: %s\n", why.c_str());
  return 1;
}

std::optional<int> to_int(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (*end != '\0' || errno != 0 || v < -1000000000L || v > 1000000000L) return std::nullopt;
  return static_cast<int>(v);
}

// Parses argv into `o`; returns a usage error text, or "" when fine.
std::string parse(int argc, char** argv, Options& o) {
  std::map<std::string, std::string*> text = {{"--platform", &o.req.platform},
                                              {"--config", &o.config},
                                              {"--cluster", &o.cluster},
                                              {"--algorithm", &o.algorithm},
                                              {"--topo-file", &o.topo_file},
                                              {"--xml", &o.xml},
                                              {"--graph-xml", &o.graph_xml},
                                              {"--dot", &o.dot},
                                              {"--svg", &o.svg},
                                              {"--png", &o.png},
                                              {"--plugins", &o.plugins}};
  std::map<std::string, int*> ints = {{"--nodes", &o.req.nodes},
                                      {"--devices", &o.req.devices},
                                      {"--lnc", &o.req.lnc},
                                      {"--ranks-per-node", &o.req.ranks_per_node},
                                      {"--rank", &o.req.rank}};
  bool have_nodes = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") {
      o.json = true;
      continue;
    }
    if (a == "-h" || a == "--help") return "help";
    const bool is_text = text.count(a) != 0, is_int = ints.count(a) != 0;
    if (!is_text && !is_int) return "unknown option " + a;
    if (i + 1 >= argc) return a + " needs a value";
    const std::string v = argv[++i];
    if (is_text) {
      if (v.empty()) return a + " needs a non-empty value";
      *text[a] = v;
      continue;
    }
    auto n = to_int(v);
    if (!n || *n < (a == "--rank" ? 0 : 1))
      return a + " needs a positive integer, not \"" + v + "\"";
    *ints[a] = *n;
    if (a == "--nodes") have_nodes = true;
  }
  if (o.req.platform.empty()) return "--platform is required";
  if (!have_nodes) return "--nodes is required";
  if (o.req.lnc != -1 && o.req.lnc != 1 && o.req.lnc != 2) return "--lnc must be 1 or 2";
  // Each of these stands in for the environment variable the configuration
  // reads (an option left out leaves the variable to the environment).
  namespace tt = nccom::topotool;
  std::string algorithm;
  if (o.algorithm == "auto") {
    algorithm = "-1";
  } else if (o.algorithm == "new") {
    algorithm = "1";
  } else if (o.algorithm == "old") {
    algorithm = "0";
  } else if (!o.algorithm.empty()) {
    return "--algorithm must be auto, new or old, not \"" + o.algorithm + "\"";
  }
  for (const auto& [option, value, env, as] :
       {std::tuple{"--config", o.config, std::string(nccom::config::kConfigFileEnv), o.config},
        std::tuple{"--cluster", o.cluster, std::string(nccom::config::kClusterEnv), o.cluster},
        std::tuple{"--algorithm", o.algorithm, tt::knob_env("graph.use_new_algorithm"), algorithm},
        std::tuple{"--topo-file", o.topo_file, tt::knob_env("topology.file"), o.topo_file},
        std::tuple{"--plugins", o.plugins, tt::knob_env("topology.plugins"), o.plugins}}) {
    if (!value.empty()) o.overrides.push_back({std::string(option) + " " + value, env, as});
  }
  return "";
}

bool write_file(const std::string& path, const std::string& text, std::string* why) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f) *why = "cannot write " + path + ": " + std::strerror(errno);
  return static_cast<bool>(f);
}

// `dot` from PATH, or "" when it is not installed.
std::string find_dot() {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string cand = (end > start ? dirs.substr(start, end - start) : ".") + "/dot";
    if (access(cand.c_str(), X_OK) == 0) return cand;
    start = end + 1;
  }
  return "";
}

// Renders `dot_text` with Graphviz into `out` as `format` (svg, png).
bool run_dot(const std::string& dot_text, const std::string& format, const std::string& out,
             std::string* why) {
  const std::string dot = find_dot();
  if (dot.empty()) {
    *why = "--" + format +
           " needs Graphviz's `dot`, which is not on PATH (scripts/deps.sh installs graphviz)";
    return false;
  }
  char tmpl[] = "/tmp/nccom-topo-XXXXXX";
  const int fd = mkstemp(tmpl);
  if (fd < 0 ||
      write(fd, dot_text.data(), dot_text.size()) != static_cast<ssize_t>(dot_text.size())) {
    *why = std::string("cannot write a temporary DOT file: ") + std::strerror(errno);
    if (fd >= 0) close(fd), unlink(tmpl);
    return false;
  }
  close(fd);
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string fmt = "-T" + format;
    execl(dot.c_str(), "dot", fmt.c_str(), tmpl, "-o", out.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  if (pid > 0) waitpid(pid, &status, 0);
  unlink(tmpl);
  if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    *why = dot + " -T" + format + " failed writing " + out + " (status " +
           std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")";
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  namespace tt = nccom::topotool;
  Options o;
  if (const std::string why = parse(argc, argv, o); !why.empty()) {
    if (why == "help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    return usage(why);
  }
  // Quiet unless NCCL_DEBUG asks for log lines: a failure is the one line
  // below, not the WARN the library logs on its way out.
  auto env = [](const char* name) {
    const char* v = std::getenv(name);
    return std::string(v != nullptr ? v : "");
  };
  // Log lines go to stderr (or NCCL_DEBUG_FILE): stdout is the report only.
  // A value that names no level or subsystem is ignored with a warning, as
  // libnccom (and NCCL) do: frameworks set these variables freely.
  const std::string file = env("NCCL_DEBUG_FILE");
  const auto checked = [&file](std::string value, bool is_level) {
    auto alone = is_level ? nccom::log::parse_settings(value, "", file, "stderr")
                          : nccom::log::parse_settings("", value, file, "stderr");
    if (alone) return value;
    std::fprintf(stderr, "nccom-topo: warning: %s; ignored\n", alone.error().message.c_str());
    return std::string();
  };
  auto logging = nccom::log::parse_settings(
      checked(env("NCCL_DEBUG"), true), checked(env("NCCL_DEBUG_SUBSYS"), false), file, "stderr");
  if (!logging) return fail(logging.error().message);
  if (auto st = nccom::log::configure(*logging); !st) return fail(st.error().message);
  // The configuration libnccom would read here, the options standing in for
  // their environment variables; the platforms are the plugins' own: a
  // name is checked once they are loaded.
  auto context = tt::load_context(tt::tool_dir(argv[0]), o.overrides);
  if (!context) return fail(context.error().message);
  auto backends = tt::Backends::load(std::move(*context), o.overrides);
  if (!backends) return fail(backends.error().message);
  auto result = tt::run(o.req, **backends);
  if (!result) return fail(result.error().message);
  const tt::ToolResult& r = *result;
  const int node = r.cluster.layout.rank_node[r.summary.rank];

  std::string why;
  if (!o.xml.empty()) {
    auto text = tt::system_xml_text(r, node);
    if (!text) return fail(text.error().message);
    if (!write_file(o.xml, *text, &why)) return fail(why);
  }
  if (!o.graph_xml.empty()) {
    auto text = tt::graph_xml_text(r, node);
    if (!text) return fail(text.error().message);
    if (!write_file(o.graph_xml, *text, &why)) return fail(why);
  }
  const std::string dot =
      (o.dot.empty() && o.svg.empty() && o.png.empty()) ? "" : tt::render_dot(r);
  if (!o.dot.empty() && !write_file(o.dot, dot, &why)) return fail(why);
  if (!o.svg.empty() && !run_dot(dot, "svg", o.svg, &why)) return fail(why);
  if (!o.png.empty() && !run_dot(dot, "png", o.png, &why)) return fail(why);
  const std::string out = o.json ? tt::render_json(r) : tt::render_text(r);
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (r.cluster.layout.n_nodes > tt::kMaxDrawnNodes && !dot.empty() && !o.json) {
    std::printf("note: the picture shows %d of %d nodes\n", tt::kMaxDrawnNodes,
                r.cluster.layout.n_nodes);
  }
  return 0;
}
