// nccom-plugin-check — does a net plugin behave the way nccom's host needs?
//
//   nccom-plugin-check [--layout neuron|nvidia] [--only CHECK[,CHECK...]] [--two-process]
//                      [--json] [--timeout SECONDS] [--verbose] [--list] PLUGIN.so
//
// Lists the ABI symbols the file exports and what the host would bind, then
// runs the conformance checks, each in a process of its own that binds the
// plugin exactly as the host does (net::bind_library) and drives it through
// the resulting net::Net. The exit status: kHelp below, as
// docs/tools/nccom-plugin-check.md says.
#include "checks.h"
#include "elf_exports.h"
#include "net/nvidia_layouts.h"
#include "net_ops.h"
#include "plugin_log.h"
#include "report.h"

#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace nccom::plugin_check {
namespace {

constexpr double kMaxTimeoutSeconds = 86400;

constexpr const char* kUsage =
    "usage: nccom-plugin-check [--layout neuron|nvidia] [--only CHECK[,CHECK...]] [--two-process]\n"
    "                          [--json] [--timeout SECONDS] [--verbose] [--list] PLUGIN.so\n"
    "       nccom-plugin-check --help\n";

constexpr const char* kHelp =
    "Runs the conformance checks over a net plugin, every check in a process of its\n"
    "own (docs/tools/nccom-plugin-check.md). Exit status:\n"
    "  0  every applicable check passed\n"
    "  1  a check failed (a wrong answer, or a wait that ran out while the plugin kept\n"
    "     answering), and none hung or crashed\n"
    "  2  usage error\n"
    "  3  a check hung, and none crashed: it made no progress for --timeout plus the\n"
    "     larger of half of it and 5 s (a plugin call that did not return), or it ran\n"
    "     past 16 x (--timeout + 10 s); its processes were killed\n"
    "  4  a check crashed: its process died of a signal, or the plugin ended it\n";

struct Command {
  Options options;
  int peer_fd = -1;  // hidden: serve as the peer on this descriptor
  bool list = false;
  bool help = false;
};

bool parse(int argc, char** argv, Command* cmd, std::string* error) {
  Options& o = cmd->options;
  // As the host: NCCOM_NET_PLUGIN_LAYOUT (net.plugin_layout) chooses the
  // header family; --layout overrides it.
  if (const char* env = std::getenv("NCCOM_NET_PLUGIN_LAYOUT"); env != nullptr && *env != '\0') {
    if (strcasecmp(env, "nvidia") == 0) {
      o.layout = net::Layout::kNvidia;
    } else if (strcasecmp(env, "neuron") != 0) {
      return *error =
                 std::string("NCCOM_NET_PLUGIN_LAYOUT is \"") + env + "\"; it is neuron or nvidia",
             false;
    }
  }
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--layout" && has_value) {
      const std::string v = argv[++i];
      if (v != "neuron" && v != "nvidia") return *error = "--layout is neuron or nvidia", false;
      o.layout = v == "nvidia" ? net::Layout::kNvidia : net::Layout::kNeuron;
    } else if (arg == "--only" && has_value) {
      const std::string list = argv[++i];
      for (std::size_t start = 0; start <= list.size();) {
        const std::size_t comma = std::min(list.find(',', start), list.size());
        o.only.push_back(list.substr(start, comma - start));
        start = comma + 1;
      }
    } else if (arg == "--timeout" && has_value) {
      const std::string text = argv[++i];
      char* end = nullptr;
      const double seconds = std::strtod(text.c_str(), &end);
      // Bounded so that every deadline made from it (now() + timeout, plus
      // the guard's margin) stays far from overflowing.
      if (end == text.c_str() || *end != '\0' || !(seconds > 0) ||
          !(seconds <= kMaxTimeoutSeconds)) {
        return *error = "--timeout takes a number of seconds greater than 0 and at most " +
                        std::to_string(static_cast<int>(kMaxTimeoutSeconds)) +
                        " (24 hours), got '" + text + "'",
               false;
      }
      o.timeout = std::chrono::milliseconds(static_cast<long long>(std::ceil(seconds * 1000)));
    } else if (arg == "--peer" && has_value) {
      cmd->peer_fd = std::atoi(argv[++i]);
    } else if (arg == "--two-process") {
      o.two_process = true;
    } else if (arg == "--json") {
      o.json = true;
    } else if (arg == "--verbose") {
      o.verbose = true;
    } else if (arg == "--list") {
      cmd->list = true;
    } else if (arg == "--help" || arg == "-h") {
      cmd->help = true;
    } else if (arg.rfind("--", 0) == 0 || !o.plugin.empty()) {
      return *error = "unexpected argument '" + arg + "'", false;
    } else {
      o.plugin = arg;
    }
  }
  for (const std::string& name : o.only) {
    bool known = false;
    for (const CheckDef& c : all_checks()) known = known || name == c.name;
    if (!known) return *error = "no check named '" + name + "' (--list shows them)", false;
  }
  if (o.plugin.empty() && !cmd->list && !cmd->help) return *error = "no plugin given", false;
  return true;
}

// What bind_library will take from these exports, in its probing order.
std::string predict_binding(const std::vector<ExportedSymbol>& symbols, net::Layout layout) {
  struct Table {
    const char* symbol;
    int version;
    std::size_t neuron, nvidia;
  };
  const Table tables[] = {
      {NCCL_NET_PLUGIN_SYMBOL_V6, 6, sizeof(ncclNet_v6_t), sizeof(net::nvidia::Net_v6)},
      {NCCL_NET_PLUGIN_SYMBOL_V5, 5, sizeof(ncclNet_v5_t), sizeof(net::nvidia::Net_v5)},
      {NCCL_NET_PLUGIN_SYMBOL_V4, 4, sizeof(ncclNet_v4_t), sizeof(net::nvidia::Net_v4)}};
  const bool neuron = layout == net::Layout::kNeuron;
  for (const Table& t : tables) {
    for (const ExportedSymbol& s : symbols) {
      if (s.name != t.symbol || !s.present) continue;
      const std::size_t expected = neuron ? t.neuron : t.nvidia;
      const std::size_t other = neuron ? t.nvidia : t.neuron;
      std::string text = s.name + " as " + (neuron ? "a Neuron" : "an NVIDIA") + " ncclNet_v" +
                         std::to_string(t.version) + " table";
      if (s.size == expected)
        return text + " (" + std::to_string(expected) + " bytes, as expected)";
      if (s.size == other) {
        return text + ", but its " + std::to_string(s.size) + " bytes are the size of the " +
               (neuron ? "NVIDIA" : "Neuron") + " table (try --layout " +
               (neuron ? "nvidia" : "neuron") + ")";
      }
      return text + ", but it records " + std::to_string(s.size) + " bytes, not " +
             std::to_string(expected);
    }
  }
  for (const ExportedSymbol& s : symbols) {
    if (s.name == "nccom_plugin" && s.present) {
      return "nothing: only an nccom_plugin descriptor (a native nccom plugin); a net plugin "
             "exports ncclNetPlugin_v6, _v5 or _v4";
    }
  }
  return "nothing: the file exports none of ncclNetPlugin_v6, _v5, _v4";
}

int check_plugin(const Options& options) {
  Report report;
  report.plugin = options.plugin;
  report.mode = options.two_process ? "two processes" : "in-process (two threads)";
  report.layout = net::to_string(options.layout);
  auto symbols = read_exports(options.plugin, {NCCL_NET_PLUGIN_SYMBOL_V6, NCCL_NET_PLUGIN_SYMBOL_V5,
                                               NCCL_NET_PLUGIN_SYMBOL_V4, "nccom_plugin"});
  if (symbols) {
    report.symbols = *symbols;
    report.binding = predict_binding(report.symbols, options.layout);
  } else {
    report.symbols_error = symbols.error().reason;
    report.binding = "nothing: the exports could not be read";
  }
  // This process never loads the plugin: each check's process does.
  if (!options.json) print_header(report, stdout);
  run_suite(options, report, [&](const CheckRecord&) {
    if (!options.json) print_row(report, stdout);
  });
  if (options.json) {
    print_json(report, stdout);
  } else {
    print_summary(report, stdout);
  }
  return report.exit_status();
}

}  // namespace
}  // namespace nccom::plugin_check

int main(int argc, char** argv) {
  using namespace nccom::plugin_check;
  Command cmd;
  std::string error;
  if (!parse(argc, argv, &cmd, &error)) {
    std::fprintf(stderr, "nccom-plugin-check: %s\n%s", error.c_str(), kUsage);
    return 2;
  }
  if (cmd.help) {
    std::printf("%s%s", kUsage, kHelp);
    return 0;
  }
  if (cmd.list) {
    for (const CheckDef& c : all_checks()) {
      std::printf("%-20s %-11s %s\n", c.name,
                  c.group == Group::kCollectives ? "collectives" : "robustness", c.description);
    }
    return 0;
  }
  if (cmd.peer_fd >= 0) {
    set_verbose(cmd.options.verbose, "peer plugin");
    const int status =
        run_peer_process(cmd.options.plugin, cmd.options.layout, cmd.peer_fd, cmd.options.timeout);
    // A check's process ends its peer when the check is over, whatever the
    // peer still holds of the plugin (a listening comm of a check that
    // stopped early): as in the check's own process, the plugin's objects
    // are not destroyed and no exit-time work runs.
    std::fflush(nullptr);
    _exit(status);
  }
  return check_plugin(cmd.options);
}
