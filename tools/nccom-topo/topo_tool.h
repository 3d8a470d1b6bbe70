// nccom-topo's engine: the machine the runtime would report for a named
// platform, the real topology plugins loaded as the communicator loads
// them, and one simulated cluster (host/graphbuild/simulate.h) computed
// through them. The renderers (text, JSON, DOT) read a ToolResult; the
// tests of tests/tools/nccom-topo use the same platform -> machine mapping.
#pragma once

#include "graphbuild/simulate.h"
#include "graphbuild/topo_backend.h"
#include "plugin/plugin_loader.h"
#include "rings/summary.h"
#include "topo_neuron/platform.h"

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
  std::string platform;  // a name of topo_neuron's platform table
  int nodes = 1;
  int devices = -1;                // -1: the platform's largest instance
  int lnc = -1;                    // -1: the platform's default
  int ranks_per_node = -1;         // -1: every logical core of the node
  std::string algorithm = "auto";  // auto | new | old
  std::string topo_file;           // NCCL_TOPO_FILE: the system comes from the nccl plugin
  int rank = 0;                    // whose global rings are shown
};

// The platform names, in table order.
std::vector<std::string> platform_names();

struct PlatformChoice {
  topo_neuron::Variant variant{};
  topo_neuron::PlatformDescription desc;  // per-node geometry
  nccom_topo_machine_t machine{};         // what the runtime would report
};

// Unknown names list the valid ones; a device count or LNC mode the
// platform forbids is an error naming the allowed values.
Result<PlatformChoice> choose_platform(const std::string& name, int devices, int lnc);

// The machine of one platform row (nrt_instance_info_t family values; "emu":
// arch_name "emu", family 0; Switch-V1: pod_type SWITCH).
nccom_topo_machine_t machine_for(topo_neuron::Variant v, int devices, int lnc);

// The loaded topology plugins, in the order the communicator asks them:
// "neuron" (platforms, NEW search) then "nccl" (topology files, OLD search).
class Backends {
 public:
  static Result<std::unique_ptr<Backends>> load(const std::vector<std::filesystem::path>& dirs,
                                                const std::string& topo_file);
  const std::vector<graphbuild::TopoBackend>& list() const { return backends_; }
  const std::string& topo_file() const { return topo_file_; }

 private:
  Backends() = default;
  std::string topo_file_;  // answered to the nccl plugin's config_get("file")
  std::vector<std::unique_ptr<plugin::LoadedPlugin>> plugins_;
  std::vector<graphbuild::TopoBackend> backends_;
};

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
