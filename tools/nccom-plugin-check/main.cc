// nccom-plugin-check — does a net plugin behave the way nccom's host needs?
//
//   nccom-plugin-check [--layout neuron|nvidia] [--only CHECK] [--two-process]
//                      [--json] [--timeout SECONDS] [--verbose] [--list] PLUGIN.so
//
// Lists the ABI symbols the file exports and what the host would bind, then
// binds it exactly as the host does (net::bind_library) and runs the
// conformance checks through the resulting net::Net. Exit status: 0 when
// every applicable check passed, 1 when one failed, 2 for a usage error,
// 3 when the plugin hung in a call (the watchdog gave up on it).
#include "checks.h"
#include "elf_exports.h"
#include "net/nvidia_layouts.h"
#include "net_ops.h"
#include "plugin_log.h"
#include "report.h"

#include <strings.h>

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
    "usage: nccom-plugin-check [--layout neuron|nvidia] [--only CHECK] [--two-process] [--json]\n"
    "                          [--timeout SECONDS] [--verbose] [--list] PLUGIN.so\n";

struct Command {
  Options options;
  int peer_fd = -1;  // hidden: serve as the peer on this descriptor
  bool list = false;
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
      o.only = argv[++i];
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
    } else if (arg.rfind("--", 0) == 0 || !o.plugin.empty()) {
      return *error = "unexpected argument '" + arg + "'", false;
    } else {
      o.plugin = arg;
    }
  }
  if (!o.only.empty()) {
    bool known = false;
    for (const CheckDef& c : all_checks()) known = known || o.only == c.name;
    if (!known) return *error = "no check named '" + o.only + "' (--list shows them)", false;
  }
  if (o.plugin.empty() && !cmd->list) return *error = "no plugin given", false;
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
  set_verbose(options.verbose, "plugin");
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

  // A plugin call may take a while (init, 64 MiB registrations), but not
  // longer than a whole wait and then some.
  guard::install(options.timeout +
                 std::max<std::chrono::milliseconds>(options.timeout / 2, std::chrono::seconds(5)));
  Context ctx;
  ctx.options = options;
  run_suite(ctx, report);
  if (options.json) {
    print_json(report, stdout);
  } else {
    print_text(report, stdout);
  }
  keep_until_exit(std::move(ctx.net));
  std::fflush(stdout);
  const int status = report.passed() ? 0 : 1;
  // A peer thread stuck inside the plugin cannot be joined: leave at once.
  if (!options.two_process && report.checks.back().name == "peer-exit") std::_Exit(status);
  return status;
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
  if (cmd.list) {
    for (const CheckDef& c : all_checks()) std::printf("%-20s %s\n", c.name, c.description);
    return 0;
  }
  if (cmd.peer_fd >= 0) {
    set_verbose(cmd.options.verbose, "peer plugin");
    guard::install(std::chrono::milliseconds(0));
    guard::running("(the peer process)");
    return run_peer_process(cmd.options.plugin, cmd.options.layout, cmd.peer_fd,
                            cmd.options.timeout);
  }
  return check_plugin(cmd.options);
}
