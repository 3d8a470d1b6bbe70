// libnccom-topo_nccl.so: the NCCL-style topology backend as an nccom-native
// topology plugin (sdk nccom/topo_plugin.h). The only exported symbol is the
// descriptor `nccom_plugin`; every entry point that can throw runs in the
// SDK's guard (nccom/util/boundary.h), so no C++ exception crosses the C
// boundary.
#include "detect.h"
#include "graph_driver.h"
#include "host_xml.h"
#include "local_share.h"
#include "system_source.h"

#include <nccom/topo_plugin.h>
#include <nccom/util/boundary.h>
#include <nccom/util/knob_value.h>
#include <nccom/util/log.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

namespace nccom::topo_nccl {
namespace {

using nccom::util::fail;
using nccom::util::guarded;
using nccom::util::put_text;

// Every message a caught exception leaves starts "topo_nccl <slot>:".
constexpr const char* kWho = "topo_nccl";

// What init was given; lives until fini.
struct PluginContext {
  std::string topologyFile;  // empty: unset
  DetectOptions detect;
};

// The plugin's own knobs ([plugins.nccl]): where detection reads the host,
// for diagnosing a machine from a copy of its files, and for tests.
const nccom_knob_t kKnobs[] = {
    {"sysfs_root", NCCOM_KNOB_STRING, 0, "",
     "Detects the host from this copy of /sys instead of /sys (diagnostics and tests). Empty: "
     "/sys.",
     0, 0, nullptr, nullptr},
    {"cpuinfo_path", NCCOM_KNOB_STRING, 0, "",
     "Reads the CPUs from this file instead of /proc/cpuinfo (diagnostics and tests). Empty: "
     "/proc/cpuinfo.",
     0, 0, nullptr, nullptr},
};
const nccom_knob_table_t kKnobTable = NCCOM_KNOB_TABLE(kKnobs);

// A setting's text: one of the plugin's knobs, or a dotted host setting.
std::string configText(const nccom_host_api_t* host, const char* key) {
  const char* v = nccom::util::knob_text(host, key);
  return v != nullptr ? std::string(v) : std::string();
}

char* dupText(const std::string& s) {
  auto* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out != nullptr) std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

Result<LocalShare> shareOf(const nccom_topo_node_t* node) {
  if (node == nullptr || node->struct_size < sizeof(nccom_topo_node_t)) {
    return make_error(NRT_INVALID, "topo_nccl: node description missing or older than this plugin");
  }
  if (node->n_local < 1 || node->n_local > topo::kMaxLocalRanks || node->local_ranks == nullptr) {
    return make_error(NRT_INVALID, "topo_nccl: node share: n_local " +
                                       std::to_string(node->n_local) + " outside 1.." +
                                       std::to_string(topo::kMaxLocalRanks) + " or no local_ranks");
  }
  LocalShare s;
  s.nRanks = node->n_ranks;
  s.nNodes = node->n_nodes;
  s.node = node->node;
  const auto n = static_cast<std::size_t>(node->n_local);
  s.ranks.assign(node->local_ranks, node->local_ranks + n);
  if (node->local_devices != nullptr)
    s.devices.assign(node->local_devices, node->local_devices + n);
  if (node->local_cores != nullptr) s.cores.assign(node->local_cores, node->local_cores + n);
  if (auto st = checkShare(s); !st) return st.take_error();
  return s;
}

// The detected host as XML, or the error of a host without accelerators.
Result<std::string> detectedSystemXml(const PluginContext& ctx, const LocalShare& share) {
  auto host = detectHost(ctx.detect);
  if (!host) return host.take_error();
  for (const auto& note : host->notes)
    NCCOM_SDK_INFO(NCCOM_SUBSYS_INIT, "topo_nccl: detection: %s", note.c_str());
  auto doc = hostToXml(*host, share);
  if (!doc) return doc.take_error();
  std::string text = topo::writeXml(*doc->root);
  auto parsed = topo::parseXml(text, "host detection");
  if (!parsed) return parsed.take_error();
  auto sys = topo::buildSystem(*parsed);
  if (!sys) {
    return make_error(NRT_FAILURE, "topo_nccl: host detection produced an unusable topology: " +
                                       sys.error().message);
  }
  if (missingRanks(*sys, share).empty()) return text;
  std::string found;
  if (host->neuronDevices.empty()) {
    found = host->neuronReason;
  } else if (share.devices.empty()) {
    found = "the runtime named no Neuron device for them";
  } else {
    found = std::to_string(host->neuronDevices.size()) +
            " Neuron devices found, none of them the device a local rank runs on";
  }
  return make_error(
      NRT_INVALID,
      "topo_nccl: no accelerator for local ranks " + share.rankList() +
          " was found on this host (" + found + "); the detected topology (" +
          std::to_string(host->numaNodes.size()) + " NUMA nodes, " +
          std::to_string(host->nics.size()) +
          " RDMA NICs) has no <gpu> for them. Set NCCL_TOPO_FILE (or topology.file) to a "
          "topology XML that lists them as <gpu rank=...>, or run on a Neuron platform "
          "(the topo_neuron backend)");
}

nccom_plugin_status_t pluginInit(const nccom_host_api_t* host, void** ctxOut) {
  if (ctxOut == nullptr) return NCCOM_PLUGIN_INVALID_ARGUMENT;
  // The slot has no message buffer: a caught exception is its status alone.
  return guarded(kWho, "init", nullptr, 0, [&] {
    auto ctx = std::make_unique<PluginContext>();
    nccom::util::install_logger(host);  // every line of the plugin (nccom/util/log.h)
    ctx->topologyFile = configText(host, "topology.file");
    // For diagnostics and tests: detection over another sysfs / cpuinfo.
    if (auto root = configText(host, "sysfs_root"); !root.empty()) ctx->detect.sysfsRoot = root;
    if (auto cpuinfo = configText(host, "cpuinfo_path"); !cpuinfo.empty())
      ctx->detect.cpuinfoPath = cpuinfo;
    *ctxOut = ctx.release();
    return NCCOM_PLUGIN_OK;
  });
}

void pluginFini(void* ctx) { delete static_cast<PluginContext*>(ctx); }

nccom_plugin_status_t pluginProbe(void* raw, const nccom_topo_machine_t* machine, char* why,
                                  size_t whyLen) {
  (void)machine;
  return guarded(kWho, "probe", why, whyLen, [&]() -> nccom_plugin_status_t {
    const auto& ctx = *static_cast<PluginContext*>(raw);
    if (!ctx.topologyFile.empty()) return NCCOM_PLUGIN_OK;
    DetectOptions options = ctx.detect;
    const FixedNicSource noNics(RdmaListing{{}, "not needed to probe", {}});
    options.nicSource = &noNics;  // probing needs the Neuron devices only
    auto host = detectHost(options);
    if (!host) {
      put_text(why, whyLen,
               "topo_nccl: no topology file configured and host detection failed: " +
                   host.error().message);
      return NCCOM_PLUGIN_UNSUPPORTED;
    }
    if (!host->neuronDevices.empty()) return NCCOM_PLUGIN_OK;
    put_text(why, whyLen,
             "topo_nccl: no topology file configured (NCCL_TOPO_FILE / topology.file) and " +
                 host->neuronReason);
    return NCCOM_PLUGIN_UNSUPPORTED;
  });
}

nccom_plugin_status_t pluginSystemXml(void* raw, const nccom_topo_machine_t* machine,
                                      const nccom_topo_node_t* node, char** xmlOut, char* err,
                                      size_t errLen) {
  (void)machine;
  return guarded(kWho, "get_system_xml", err, errLen, [&]() -> nccom_plugin_status_t {
    if (xmlOut == nullptr)
      return fail(make_error(NRT_INVALID, "topo_nccl: xml_out is NULL"), err, errLen);
    const auto& ctx = *static_cast<PluginContext*>(raw);
    auto share = shareOf(node);
    if (!share) return fail(share.error(), err, errLen);
    auto text = ctx.topologyFile.empty() ? detectedSystemXml(ctx, *share)
                                         : loadTopologyFile(ctx.topologyFile, *share);
    if (!text) return fail(text.error(), err, errLen);
    if (!ctx.topologyFile.empty()) {
      NCCOM_SDK_INFO(NCCOM_SUBSYS_INIT, "topo_nccl: topology from %s", ctx.topologyFile.c_str());
    }
    *xmlOut = dupText(*text);
    if (*xmlOut == nullptr)
      return fail(make_error(NRT_RESOURCE, "topo_nccl: out of memory"), err, errLen);
    return NCCOM_PLUGIN_OK;
  });
}

nccom_plugin_status_t pluginComputeGraph(void* raw, const nccom_topo_machine_t* machine,
                                         const nccom_topo_node_t* node, const char* systemXml,
                                         const nccom_topo_graph_request_t* request, char** graphOut,
                                         char* err, size_t errLen) {
  (void)machine;
  (void)raw;  // the search needs nothing init was given
  return guarded(kWho, "compute_graph", err, errLen, [&]() -> nccom_plugin_status_t {
    if (graphOut == nullptr || systemXml == nullptr || request == nullptr ||
        request->struct_size < sizeof(nccom_topo_graph_request_t)) {
      return fail(make_error(NRT_INVALID, "topo_nccl: compute_graph: missing or short argument"),
                  err, errLen);
    }
    if (request->pattern != static_cast<int>(topo::SearchPattern::Ring)) {
      put_text(err, errLen,
               "topo_nccl searches RING (pattern 4) only; pattern " +
                   std::to_string(request->pattern) + " is not implemented");
      return NCCOM_PLUGIN_UNSUPPORTED;
    }
    if (request->new_algorithm == 1) {
      put_text(err, errLen,
               "topo_nccl runs the OLD search; the NEW search (NCCL_GRAPH_USE_NEW_ALGORITHM) is "
               "topo_neuron's");
      return NCCOM_PLUGIN_UNSUPPORTED;
    }
    auto share = shareOf(node);
    if (!share) return fail(share.error(), err, errLen);
    SearchRequest req;
    req.crossNic = request->cross_nic;
    req.minChannels = request->min_channels;
    req.maxChannels = request->max_channels;
    auto text = computeGraphXml(systemXml, *share, req);
    if (!text) return fail(text.error(), err, errLen);
    *graphOut = dupText(*text);
    if (*graphOut == nullptr)
      return fail(make_error(NRT_RESOURCE, "topo_nccl: out of memory"), err, errLen);
    return NCCOM_PLUGIN_OK;
  });
}

void pluginFreeText(void* ctx, char* text) {
  (void)ctx;
  std::free(text);
}

const nccom_topo_ops_t kOps = {
    {sizeof(nccom_topo_ops_t), 0, pluginInit, pluginFini},
    NCCOM_TOPO_OPS_VERSION,
    0,
    pluginProbe,
    pluginSystemXml,
    pluginComputeGraph,
    pluginFreeText,
    nullptr,  // order_nodes: pods are topo_neuron's; the host keeps index order
    nullptr,  // list_platforms: it names no platforms; it reads files and hosts
    nullptr,  // describe_node
};

}  // namespace
}  // namespace nccom::topo_nccl

extern "C" NCCOM_PLUGIN_EXPORT const nccom_plugin_descriptor_t nccom_plugin = {
    NCCOM_PLUGIN_ABI_VERSION,
    sizeof(nccom_plugin_descriptor_t),
    NCCOM_PLUGIN_KIND_TOPOLOGY,
    0,
    "nccl",
    "1.0.0",
    NCCOM_CAP_TOPO_SYSTEM | NCCOM_CAP_TOPO_GRAPH,
    &nccom::topo_nccl::kOps.head,
    &nccom::topo_nccl::kKnobTable,
};
