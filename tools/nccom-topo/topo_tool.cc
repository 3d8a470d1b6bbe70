#include "topo_tool.h"

#include "config/plugin_knobs.h"
#include "graphbuild/comm_graph.h"

#include <nccom/topo/xml.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>

namespace nccom::topotool {

std::string knob_env(std::string_view key) {
  for (const config::Knob& k : config::host_knobs()) {
    if (k.key == key) return k.env.empty() ? std::string() : std::string(k.env.front());
  }
  return "";
}

std::filesystem::path tool_dir(const std::string& argv0) {
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) exe = std::filesystem::absolute(argv0, ec);
  return exe.parent_path();
}

Result<std::unique_ptr<core::Context>> load_context(const std::filesystem::path& dir,
                                                    const std::vector<OptionOverride>& overrides) {
  config::LoadOptions options = core::default_load_options(dir);
  // The Config keeps this lookup (plugin knobs are resolved with it when
  // the plugins load), so it owns its copy of the overrides.
  auto table = std::make_shared<std::map<std::string, std::string>>();
  for (const OptionOverride& o : overrides) (*table)[o.env] = o.value;
  options.getenv = [table](const char* name) -> const char* {
    auto it = table->find(name);
    return it != table->end() ? it->second.c_str() : std::getenv(name);
  };
  core::CreateOptions setup;
  setup.installed_plugins = (dir / ".." / "lib" / "nccom").lexically_normal();
  setup.configure_logging = false;
  return core::Context::create(options, setup);
}

Result<std::unique_ptr<Backends>> Backends::load(std::unique_ptr<core::Context> context,
                                                 std::vector<OptionOverride> overrides) {
  std::unique_ptr<Backends> b(new Backends);
  b->context_ = std::move(context);
  b->overrides_ = std::move(overrides);
  const config::Config& config = b->context_->config();
  std::vector<std::string> skipped;
  auto bound = graphbuild::load_topology_backends(*b->context_, &skipped);
  if (!bound) return bound.take_error();
  if (!skipped.empty()) {
    return make_error(NRT_FAILURE, "a topology plugin of topology.plugins = \"" +
                                       config.get_string("topology.plugins") +
                                       "\" could not be loaded (a communicator would go on "
                                       "without it; set NCCOM_PLUGIN_PATH or "
                                       "plugins.search_path): " +
                                       skipped.front());
  }
  b->backends_ = std::move(*bound);
  if (b->backends_.empty()) {
    return make_error(NRT_INVALID, "topology.plugins = \"" + config.get_string("topology.plugins") +
                                       "\" names no topology plugin");
  }
  for (const graphbuild::TopoBackend& backend : b->backends_) {
    auto listed = backend.platforms_xml();
    if (!listed) return listed.take_error();
    if (!*listed) continue;
    auto entries = parse_platforms(**listed, backend.name());
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

namespace {

// Where an entry's value came from, naming the option that stood in for
// its environment variable.
std::string source_text(const config::Source& source,
                        const std::vector<OptionOverride>& overrides) {
  if (source.kind == config::Source::Kind::Env) {
    for (const OptionOverride& o : overrides) {
      if (o.env == source.env_var) return "option " + o.option + " (as " + o.env + ")";
    }
  }
  return source.to_string();
}

const OptionOverride* override_of(const std::vector<OptionOverride>& overrides, const char* env) {
  for (const OptionOverride& o : overrides)
    if (o.env == env) return &o;
  return nullptr;
}

}  // namespace

ConfigSummary summarize_config(const Backends& backends) {
  const config::Config& config = backends.context().config();
  const auto& overrides = backends.overrides();
  ConfigSummary s;
  s.file = config.file();
  if (!s.file.empty()) {
    const OptionOverride* o = override_of(overrides, config::kConfigFileEnv);
    const char* env = config.env(config::kConfigFileEnv);
    s.file_by = o != nullptr                     ? "option " + o->option
                : env != nullptr && *env != '\0' ? std::string(config::kConfigFileEnv)
                                                 : std::string("default path");
  }
  s.cluster = config.cluster();
  if (!s.cluster.empty()) {
    const OptionOverride* o = override_of(overrides, config::kClusterEnv);
    s.cluster_by = o != nullptr ? "option " + o->option : config.cluster_origin();
  }
  for (const auto& d : backends.context().plugin_dirs()) s.plugin_dirs.push_back(d.string());
  for (const char* key : {"plugins.search_path", "topology.plugins", "topology.file", "graph.file",
                          "graph.use_new_algorithm", "graph.p2p_level", "graph.p2p_disable"}) {
    const config::Entry& e = config.entry(key);
    s.knobs.push_back({key, e.text(), source_text(e.source, overrides)});
  }
  // The topology plugins' own knobs, resolved as when they were loaded.
  for (const graphbuild::TopoBackend& backend : backends.list()) {
    const plugin::LoadedPlugin* p =
        backends.context().find_plugin(NCCOM_PLUGIN_KIND_TOPOLOGY, backend.name());
    if (p == nullptr) continue;
    auto section =
        config::PluginSection::bind(config, p->name(), "topology plugin " + p->name(), p->knobs());
    if (!section) continue;  // refused when it loaded: the run did not get here
    for (const config::Entry& e : section->entries())
      s.knobs.push_back({std::string(e.key()), e.text(), source_text(e.source, overrides)});
  }
  return s;
}

graphbuild::ClusterRequest cluster_request(const PlatformChoice& p, int nodes, int ranks_per_node,
                                           const graphbuild::GraphSettings& settings) {
  graphbuild::ClusterRequest r;
  r.machine = p.machine;
  r.n_nodes = nodes;
  r.ranks_per_node = ranks_per_node;
  r.cores_per_device = p.node.vcores_per_device;
  r.settings = settings;
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
  const config::Config& config = backends.context().config();
  ToolResult out;
  out.request = req;
  out.topo_file = config.get_string("topology.file");
  if (!out.topo_file.empty()) {
    // Parsed here first so a bad file is reported as file:line:col.
    auto doc = topo::parseXmlFile(out.topo_file);
    if (!doc) return doc.take_error();
  }
  auto settings = graphbuild::graph_settings(config, /*is_rank0=*/false);
  if (!settings) return settings.take_error();
  out.config = summarize_config(backends);
  out.platform = std::move(*choice);
  out.cluster_request = cluster_request(out.platform, req.nodes, rpn, *settings);
  auto cluster = graphbuild::simulate_cluster(backends.list(), out.cluster_request);
  if (!cluster) return cluster.take_error();
  out.cluster = std::move(*cluster);
  auto summary = graphbuild::simulate_rank(out.cluster, req.rank);
  if (!summary) return summary.take_error();
  out.summary = std::move(*summary);
  return out;
}

}  // namespace nccom::topotool
