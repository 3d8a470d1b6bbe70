#include "topo_tool.h"

#include <nccom/topo/xml.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace nccom::topotool {
namespace {

const char* config_get(void* host_ctx, const char* key) {
  const auto* file = static_cast<const std::string*>(host_ctx);
  if (file == nullptr || key == nullptr || std::strcmp(key, "file") != 0 || file->empty()) {
    return nullptr;
  }
  return file->c_str();
}

}  // namespace

Result<std::unique_ptr<Backends>> Backends::load(const std::vector<std::filesystem::path>& dirs,
                                                 const std::string& topo_file,
                                                 const std::vector<std::string>& plugins) {
  std::unique_ptr<Backends> b(new Backends);
  b->topo_file_ = topo_file;
  nccom_host_api_t host{};
  host.struct_size = sizeof host;
  host.abi_version = NCCOM_PLUGIN_ABI_VERSION;
  host.config_get = &config_get;
  host.host_ctx = &b->topo_file_;  // stable: *b is never moved
  std::string where;
  for (const auto& d : dirs) where += (where.empty() ? "" : ", ") + d.string();
  if (plugins.empty()) return make_error(NRT_INVALID, "no topology plugin to load");
  for (const std::string& name : plugins) {
    auto p = plugin::load_plugin(name, NCCOM_PLUGIN_KIND_TOPOLOGY, host, dirs);
    if (!p) {
      const std::string file =
          name.find('/') != std::string::npos ? name : "libnccom-" + name + ".so";
      return make_error(NRT_FAILURE, "topology plugin " + file + " could not be loaded (searched " +
                                         where + "; set NCCOM_PLUGIN_PATH): " + p.error().message);
    }
    b->plugins_.push_back(std::move(*p));
    auto bound = graphbuild::TopoBackend::bind(*b->plugins_.back());
    if (!bound) return bound.take_error();
    b->backends_.push_back(*bound);
    auto listed = b->backends_.back().platforms_xml();
    if (!listed) return listed.take_error();
    if (!*listed) continue;
    auto entries = parse_platforms(**listed, b->backends_.back().name());
    if (!entries) return entries.take_error();
    for (PlatformEntry& e : *entries) {
      const bool taken =
          std::any_of(b->platforms_.begin(), b->platforms_.end(),
                      [&](const PlatformEntry& other) { return other.name == e.name; });
      if (taken) {
        return make_error(NRT_FAILURE, "platform \"" + e.name + "\" is listed by topology plugin " +
                                           e.backend + " and by an earlier one");
      }
      b->platforms_.push_back(std::move(e));
    }
  }
  return b;
}

const graphbuild::TopoBackend* Backends::find(const std::string& name) const {
  for (const auto& backend : backends_)
    if (backend.name() == name) return &backend;
  return nullptr;
}

std::vector<std::filesystem::path> plugin_dirs(const std::string& argv0) {
  std::vector<std::filesystem::path> dirs;
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) exe = std::filesystem::absolute(argv0, ec);
  dirs.push_back((exe.parent_path() / ".." / "lib" / "nccom").lexically_normal());
  if (const char* env = std::getenv("NCCOM_PLUGIN_PATH"); env != nullptr) {
    std::stringstream text(env);
    for (std::string d; std::getline(text, d, ':');) {
      if (!d.empty()) dirs.emplace_back(d);
    }
  }
  return dirs;
}

graphbuild::ClusterRequest cluster_request(const PlatformChoice& p, int nodes, int ranks_per_node,
                                           int new_algorithm) {
  graphbuild::ClusterRequest r;
  r.machine = p.machine;
  r.n_nodes = nodes;
  r.ranks_per_node = ranks_per_node;
  r.cores_per_device = p.node.vcores_per_device;
  r.settings.new_algorithm = new_algorithm;
  return r;
}

Result<ToolResult> run(const ToolRequest& req, const Backends& backends) {
  auto choice = choose_platform(backends, req.platform, req.devices, req.lnc);
  if (!choice) return choice.take_error();
  const int cores = choice->node.n_vcores();
  const int rpn = req.ranks_per_node < 0 ? cores : req.ranks_per_node;
  if (rpn < 1 || rpn > cores) {
    return make_error(NRT_INVALID, std::to_string(rpn) + " ranks per node on " + req.platform +
                                       " with " + std::to_string(choice->node.n_devices) +
                                       " devices at LNC=" + std::to_string(choice->node.lnc) +
                                       ": a node has " + std::to_string(cores) +
                                       " logical cores, one rank each");
  }
  if (req.nodes < 1 || req.nodes > kMaxNodes) {
    return make_error(NRT_INVALID, std::to_string(req.nodes) +
                                       " nodes: nccom-topo simulates 1 to " +
                                       std::to_string(kMaxNodes) + " nodes");
  }
  const long n_ranks = static_cast<long>(req.nodes) * rpn;
  if (req.rank < 0 || req.rank >= n_ranks) {
    return make_error(NRT_INVALID, "rank " + std::to_string(req.rank) + " is outside the " +
                                       std::to_string(n_ranks) + " ranks of the cluster");
  }
  if (!req.topo_file.empty()) {
    // Parsed here first so a bad file is reported as file:line:col.
    auto doc = topo::parseXmlFile(req.topo_file);
    if (!doc) return doc.take_error();
  }
  int new_algorithm = -1;
  if (req.algorithm == "new") new_algorithm = 1;
  if (req.algorithm == "old") new_algorithm = 0;

  ToolResult out;
  out.request = req;
  out.platform = std::move(*choice);
  out.cluster_request = cluster_request(out.platform, req.nodes, rpn, new_algorithm);
  out.cluster_request.settings.topo_file_set = !req.topo_file.empty();
  auto cluster = graphbuild::simulate_cluster(backends.list(), out.cluster_request);
  if (!cluster) return cluster.take_error();
  out.cluster = std::move(*cluster);
  auto summary = graphbuild::simulate_rank(out.cluster, req.rank);
  if (!summary) return summary.take_error();
  out.summary = std::move(*summary);
  return out;
}

}  // namespace nccom::topotool
