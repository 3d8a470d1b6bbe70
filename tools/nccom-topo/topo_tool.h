// nccom-topo's engine: the real topology plugins loaded as the communicator
// loads them; the platforms they list (list_platforms) with the machine a
// runtime would report for each; the node a plugin models for that machine
// (describe_node); and one simulated cluster (host/graphbuild/simulate.h)
// computed through them. Everything the tool knows of a platform comes from
// the plugins through the SDK's slots. The renderers (text, JSON, DOT) read a
// ToolResult.
#pragma once

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
  int devices = -1;                // -1: the platform's default (its largest instance)
  int lnc = -1;                    // -1: the platform's default
  int ranks_per_node = -1;         // -1: every logical core of the node
  std::string algorithm = "auto";  // auto | new | old
  std::string topo_file;           // NCCL_TOPO_FILE: the system comes from the nccl plugin
  int rank = 0;                    // whose global rings are shown
  // The topology plugins, in the order they are asked (names or paths), as
  // topology.plugins gives them to a communicator.
  std::vector<std::string> plugins = {"topo_neuron", "topo_nccl"};
};

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

// The loaded topology plugins, in the order the communicator asks them (by
// default topo_neuron: platforms, NEW search; then topo_nccl: topology
// files, OLD search), and the platforms they list.
class Backends {
 public:
  static Result<std::unique_ptr<Backends>> load(const std::vector<std::filesystem::path>& dirs,
                                                const std::string& topo_file,
                                                const std::vector<std::string>& plugins = {
                                                    "topo_neuron", "topo_nccl"});
  const std::vector<graphbuild::TopoBackend>& list() const { return backends_; }
  const std::string& topo_file() const { return topo_file_; }
  const std::vector<PlatformEntry>& platforms() const { return platforms_; }
  // The backend of that name, or nullptr.
  const graphbuild::TopoBackend* find(const std::string& name) const;

 private:
  Backends() = default;
  std::string topo_file_;  // answered to the nccl plugin's config_get("file")
  std::vector<std::unique_ptr<plugin::LoadedPlugin>> plugins_;
  std::vector<graphbuild::TopoBackend> backends_;
  std::vector<PlatformEntry> platforms_;
};

// The platform names, in the plugins' order.
std::vector<std::string> platform_names(const Backends& backends);

// Unknown names list the valid ones; a device count or LNC mode the
// platform forbids is the plugin's error naming the allowed values.
Result<PlatformChoice> choose_platform(const Backends& backends, const std::string& name,
                                       int devices, int lnc);

// <exe dir>/../lib/nccom, then each entry of NCCOM_PLUGIN_PATH (':'-separated).
std::vector<std::filesystem::path> plugin_dirs(const std::string& argv0);

struct ToolResult {
  ToolRequest request;
  PlatformChoice platform;
  graphbuild::ClusterRequest cluster_request;
  graphbuild::SimulatedCluster cluster;
  rings::GraphSummary summary;  // request.rank's rings
};

// Checks the request (ranks per node against the node's logical cores, the
// rank against the cluster, the topology file's syntax) and simulates it.
Result<ToolResult> run(const ToolRequest& request, const Backends& backends);

// The cluster request of a platform (used by run and by the matrix test).
graphbuild::ClusterRequest cluster_request(const PlatformChoice& p, int nodes, int ranks_per_node,
                                           int new_algorithm);

}  // namespace nccom::topotool
