// nccom-topo's engine: the configuration resolved as libnccom resolves it
// (core::Context: the same files, cluster section and environment, the
// tool's options standing in for environment variables); the topology
// plugins that configuration names, loaded and bound by the code
// neuronBuildGraphComm runs (graphbuild::load_topology_backends); the
// platforms they list (list_platforms) with the machine a runtime would
// report for each; the node a plugin models for that machine
// (describe_node); and one simulated cluster (host/graphbuild/simulate.h)
// computed through them with the configuration's graph settings
// (graphbuild::graph_settings). Everything the tool knows of a platform
// comes from the plugins through the SDK's slots. The renderers (text, JSON,
// DOT) read a ToolResult.
#pragma once

#include "core/context.h"
#include "graphbuild/simulate.h"
#include "graphbuild/topo_backend.h"
#include "plugin/plugin_loader.h"
#include "rings/summary.h"

#include <nccom/topo_plugin.h>
#include <nccom/util/result.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace nccom::topotool {

// Largest cluster simulated: the whole cluster is computed in one process,
// every node in turn (256 Trn2 nodes: ~3 s NEW, ~2 min OLD, 340 MiB).
inline constexpr int kMaxNodes = 1024;

struct ToolRequest {
  std::string platform;  // a name a topology plugin lists
  int nodes = 1;
  int devices = -1;         // -1: the platform's default (its largest instance)
  int lnc = -1;             // -1: the platform's default
  int ranks_per_node = -1;  // -1: every logical core of the node
  int rank = 0;             // whose global rings are shown
};

// A command-line option that stands in for an environment variable the
// configuration reads (a knob's, or NCCOM_CONFIG / NCCOM_CLUSTER): the
// configuration layer sees `value` where the environment would be read.
struct OptionOverride {
  std::string option;  // as given: "--algorithm new"
  std::string env;     // "NCCL_GRAPH_USE_NEW_ALGORITHM"
  std::string value;   // "1"
};

// The environment variable a knob of the host reads first ("" for none).
std::string knob_env(std::string_view key);

// The configuration as libnccom would resolve it in this process:
// NCCOM_CONFIG, else /etc/nccom/nccom.toml, else <prefix>/share/nccom/nccom.toml
// of the tool's installation (`tool_dir`: the tool's bin/); NCCOM_CLUSTER;
// the environment, with `overrides` read where set. Plugins are looked for
// in plugins.search_path (NCCOM_PLUGIN_PATH), then <prefix>/lib/nccom, as
// libnccom looks in its own lib/nccom. Logging is left to the caller.
Result<std::unique_ptr<core::Context>> load_context(const std::filesystem::path& tool_dir,
                                                    const std::vector<OptionOverride>& overrides);

// The bin/ directory of this executable (/proc/self/exe, else argv0's).
std::filesystem::path tool_dir(const std::string& argv0);

// One platform a topology plugin lists (nccom/topo_plugin.h list_platforms).
struct PlatformEntry {
  std::string name;
  std::string codename;
  std::string generation;
  std::string backend;             // the plugin that lists it
  nccom_topo_machine_t machine{};  // device_count and vcore_size: the defaults
  std::vector<int> devices;        // device counts of its instances
  std::vector<int> lnc;            // logical-core sizes it accepts
};

// A node as its plugin models it (describe_node).
struct NodeModel {
  struct Device {
    int id = 0;
    int mla = 0;
    int numa = 0;
    int pci_switch = 0;
    std::vector<int> vcores;
  };
  struct Nic {
    int id = 0;
    int numa = 0;
    int pci_switch = 0;
    std::vector<int> devices;
  };
  struct Link {
    int a = 0;
    int b = 0;
    std::string locality;  // the plugin's own word
  };
  std::string platform;
  int n_devices = 0;
  int cores_per_device = 0;
  int lnc = 1;
  int vcores_per_device = 0;
  std::vector<Device> devices;
  std::vector<Nic> nics;
  std::vector<Link> links;

  int n_vcores() const { return n_devices * vcores_per_device; }
};

// The two answers read like any plugin text: a missing attribute, a
// non-number, a count that disagrees with the elements or a link to a
// device that is not there is an error naming the plugin.
Result<std::vector<PlatformEntry>> parse_platforms(const std::string& xml,
                                                   const std::string& backend);
Result<NodeModel> parse_node(const std::string& xml, const std::string& backend);

struct PlatformChoice {
  PlatformEntry entry;
  NodeModel node;                  // per-node geometry
  nccom_topo_machine_t machine{};  // what the runtime would report
};

// The topology plugins of the configuration's topology.plugins, loaded into
// the context by graphbuild::load_topology_backends (by default
// topo_neuron: platforms, NEW search; then topo_nccl: topology files, OLD
// search), and the platforms they list. Owns the context, so the plugins
// live as long as the backends.
class Backends {
 public:
  // A plugin of topology.plugins that does not load is an error here (a
  // communicator would go on without it, and its platforms with it).
  static Result<std::unique_ptr<Backends>> load(std::unique_ptr<core::Context> context,
                                                std::vector<OptionOverride> overrides = {});
  const std::vector<graphbuild::TopoBackend>& list() const { return backends_; }
  const core::Context& context() const { return *context_; }
  const std::vector<OptionOverride>& overrides() const { return overrides_; }
  const std::vector<PlatformEntry>& platforms() const { return platforms_; }
  // The backend of that name, or nullptr.
  const graphbuild::TopoBackend* find(const std::string& name) const;

 private:
  Backends() = default;
  std::unique_ptr<core::Context> context_;  // declared first: outlives the backends
  std::vector<OptionOverride> overrides_;
  std::vector<graphbuild::TopoBackend> backends_;
  std::vector<PlatformEntry> platforms_;
};

// The platform names, in the plugins' order.
std::vector<std::string> platform_names(const Backends& backends);

// Unknown names list the valid ones; a device count or LNC mode the
// platform forbids is the plugin's error naming the allowed values.
Result<PlatformChoice> choose_platform(const Backends& backends, const std::string& name,
                                       int devices, int lnc);

// One knob as the result names it: its effective value and where it came
// from (the file and line, the cluster section, the environment variable,
// or the option standing in for it).
struct KnobShown {
  std::string key;
  std::string value;
  std::string source;
};

// What the simulation was configured with.
struct ConfigSummary {
  std::string file;     // the configuration file read; "" = built-in defaults
  std::string file_by;  // how it was chosen: "NCCOM_CONFIG", "--config", "default path"
  std::string cluster;  // the active cluster section, "" for none
  std::string cluster_by;
  std::vector<std::string> plugin_dirs;
  // The knobs that shape the graph: plugins.search_path, topology.*,
  // graph.* and every knob of every loaded topology plugin.
  std::vector<KnobShown> knobs;
};

ConfigSummary summarize_config(const Backends& backends);

struct ToolResult {
  ToolRequest request;
  ConfigSummary config;
  std::string topo_file;  // topology.file, "" when unset
  PlatformChoice platform;
  graphbuild::ClusterRequest cluster_request;
  graphbuild::SimulatedCluster cluster;
  rings::GraphSummary summary;  // request.rank's rings
};

// Checks the request (ranks per node against the node's logical cores, the
// rank against the cluster, the topology file's syntax) and simulates it
// with the configuration's graph settings (graphbuild::graph_settings, as
// every rank but rank 0 reads them: the tool writes no topology dump).
Result<ToolResult> run(const ToolRequest& request, const Backends& backends);

// The cluster request of a platform (used by run and by the matrix test).
graphbuild::ClusterRequest cluster_request(const PlatformChoice& p, int nodes, int ranks_per_node,
                                           const graphbuild::GraphSettings& settings);

}  // namespace nccom::topotool
