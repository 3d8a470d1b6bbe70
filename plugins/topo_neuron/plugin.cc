// libnccom-topo_neuron.so: the Neuron topology plugin (sdk nccom/topo_plugin.h).
//   probe          Neuron instance families and arch "emu"; the rest UNSUPPORTED
//   get_system_xml verifyTopology + checkRanksFitCores, then the synthesized <system>
//   compute_graph  the NEW search when selectSearch says NEW; UNSUPPORTED for OLD
//   order_nodes    the UltraServer pod order (podNodeOrder); UNSUPPORTED without pods
//   list_platforms the platform table with each row's machine (for nccom-topo)
//   describe_node  the devices, NICs and device links of a machine's node
// Knobs ([plugins.neuron], declared in the descriptor): disable_verify and
// default_new_algorithm. Errors go to the caller's buffer with the rule named;
// INFO lines go to the host's log (installed at init, nccom/util/log.h); no
// exception leaves a slot (nccom/util/boundary.h).
#include "catalogue.h"
#include "graph_compute.h"
#include "machine.h"
#include "pod.h"
#include "selection.h"
#include "synthesize.h"

#include <nccom/knob.h>
#include <nccom/topo_plugin.h>
#include <nccom/util/boundary.h>
#include <nccom/util/knob_value.h>
#include <nccom/util/log.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace nccom;
using namespace nccom::topo_neuron;
using nccom::util::fail;
using nccom::util::guarded;
using nccom::util::put_text;

constexpr const char* kWho = "topo_neuron";

struct Context {
  nccom_host_api_t host{};
  bool hasHost = false;
};

char* dupText(const std::string& s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out != nullptr) std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

// A text answer: OK with the text, or the error (out of memory included).
nccom_plugin_status_t answerText(const Result<std::string>& text, const char* call, char** out,
                                 char* err, size_t errLen) {
  if (!text) return fail(text.error(), err, errLen);
  *out = dupText(*text);
  if (*out == nullptr) {
    put_text(err, errLen, std::string("topo_neuron ") + call + ": out of memory");
    return NCCOM_PLUGIN_SYSTEM_ERROR;
  }
  return NCCOM_PLUGIN_OK;
}

// The plugin's knobs ([plugins.neuron]), each with the environment variable
// libnccom reads for it.
const char* const kEnvDisableVerify[] = {"CCOM_DBG_DISABLE_VERIFY_TOPOLOGY", nullptr};
const char* const kEnvDefaultNew[] = {"NCCOM_GRAPH_DEFAULT_NEW_ALGORITHM", nullptr};
const nccom_knob_t kKnobs[] = {
    {"disable_verify", NCCOM_KNOB_BOOL, NCCOM_KNOB_PRESENCE_MEANS_TRUE, "false",
     "Skips the check that the discovered topology matches the platform's expected shape; meant "
     "for debugging only. In the environment any value other than 0, false, no or off turns it "
     "on, as in libnccom.",
     0, 0, nullptr, kEnvDisableVerify},
    {"default_new_algorithm", NCCOM_KNOB_BOOL, 0, "true",
     "The ring search on the Neuron platforms when graph.use_new_algorithm is -1: true the NEW "
     "priority search, false the OLD bandwidth-tier search (the original's default, which cannot "
     "place 64 cores per node across nodes within its budget and then falls back to the simple "
     "order).",
     0, 0, nullptr, kEnvDefaultNew},
};
const nccom_knob_table_t kKnobTable = NCCOM_KNOB_TABLE(kKnobs);

// A boolean knob. A host that answers nothing (an older host, or a tool
// that loads the plugin with a host API of its own) gets `fallback`: the
// original's behaviour (verify on, the OLD search by default). The host has
// checked the value; anything else is still refused, naming the knob.
Result<bool> configBool(const Context* c, const char* key, bool fallback) {
  bool value = fallback;
  if (c != nullptr && c->hasHost && !nccom::util::knob_bool(&c->host, key, fallback, value))
    return make_error(NRT_INVALID, std::string("topo_neuron: plugins.neuron.") + key + " = '" +
                                       nccom::util::knob_text(&c->host, key) +
                                       "' is not a boolean (true or false)");
  return value;
}

nccom_plugin_status_t neuronInit(const nccom_host_api_t* host, void** ctx) {
  if (ctx == nullptr) return NCCOM_PLUGIN_INVALID_ARGUMENT;
  auto* c = new (std::nothrow) Context;
  if (c == nullptr) return NCCOM_PLUGIN_SYSTEM_ERROR;
  nccom::util::install_logger(host);
  // The knobs are read through the host API, kept whole when it is.
  if (host != nullptr && host->struct_size >= sizeof(nccom_host_api_t)) {
    c->host = *host;
    c->hasHost = true;
  }
  *ctx = c;
  return NCCOM_PLUGIN_OK;
}

void neuronFini(void* ctx) { delete static_cast<Context*>(ctx); }

nccom_plugin_status_t probe(void* ctx, const nccom_topo_machine_t* m, char* why, size_t whyLen) {
  (void)ctx;
  if (m == nullptr) {
    put_text(why, whyLen, "topo_neuron: no machine description");
    return NCCOM_PLUGIN_INVALID_ARGUMENT;
  }
  auto d = describeMachine(*m);
  if (!d) {
    put_text(why, whyLen, d.error().message);
    return NCCOM_PLUGIN_UNSUPPORTED;
  }
  return NCCOM_PLUGIN_OK;
}

nccom_plugin_status_t systemXml(void* ctx, const nccom_topo_machine_t* m,
                                const nccom_topo_node_t* node, char** xmlOut, char* err,
                                size_t errLen) {
  if (m == nullptr || node == nullptr || xmlOut == nullptr) {
    put_text(err, errLen, "topo_neuron get_system_xml: a NULL argument");
    return NCCOM_PLUGIN_INVALID_ARGUMENT;
  }
  *xmlOut = nullptr;
  const auto* c = static_cast<const Context*>(ctx);
  auto disable = configBool(c, "disable_verify", false);
  if (!disable) return fail(disable.error(), err, errLen);
  auto d = describeMachine(*m);
  if (!d) return fail(d.error(), err, errLen);
  auto share = shareFromNode(*node);
  if (!share) return fail(share.error(), err, errLen);
  return answerText(synthesizeSystemXml(*d, *share, *disable), "get_system_xml", xmlOut, err,
                    errLen);
}

nccom_plugin_status_t graph(void* ctx, const nccom_topo_machine_t* m, const nccom_topo_node_t* node,
                            const char* systemXml, const nccom_topo_graph_request_t* request,
                            char** graphOut, char* err, size_t errLen) {
  if (m == nullptr || node == nullptr || systemXml == nullptr || request == nullptr ||
      graphOut == nullptr) {
    put_text(err, errLen, "topo_neuron compute_graph: a NULL argument");
    return NCCOM_PLUGIN_INVALID_ARGUMENT;
  }
  *graphOut = nullptr;
  if (request->struct_size < sizeof(nccom_topo_graph_request_t)) {
    put_text(err, errLen,
             "topo_neuron compute_graph: nccom_topo_graph_request_t struct_size " +
                 std::to_string(request->struct_size) + " is too small");
    return NCCOM_PLUGIN_INVALID_ARGUMENT;
  }
  const auto* c = static_cast<const Context*>(ctx);
  auto variant = machineVariant(*m);
  if (!variant) return fail(variant.error(), err, errLen);
  std::optional<bool> knob;
  if (request->new_algorithm == 0 || request->new_algorithm == 1) {
    knob = request->new_algorithm == 1;
  } else if (request->new_algorithm != -1) {
    put_text(err, errLen,
             "topo_neuron compute_graph: new_algorithm " + std::to_string(request->new_algorithm) +
                 " is not -1 (unset), 0 (off) or 1 (on)");
    return NCCOM_PLUGIN_INVALID_ARGUMENT;
  }
  auto defaultNew = configBool(c, "default_new_algorithm", false);
  if (!defaultNew) return fail(defaultNew.error(), err, errLen);
  const SearchChoice choice = selectSearch(*variant, knob, *defaultNew);
  if (choice.fromKnob)
    NCCOM_SDK_INFO(NCCOM_SUBSYS_GRAPH,
                   "topo_neuron: NCCL_GRAPH_USE_NEW_ALGORITHM (the host's "
                   "graph.use_new_algorithm) is %d",
                   request->new_algorithm);
  NCCOM_SDK_INFO(NCCOM_SUBSYS_GRAPH, "topo_neuron: %s", choice.reason);
  if (choice.algorithm == SearchAlgorithm::Old) {
    put_text(err, errLen, std::string("topo_neuron: ") + choice.reason);
    return NCCOM_PLUGIN_UNSUPPORTED;
  }
  auto disable = configBool(c, "disable_verify", false);
  if (!disable) return fail(disable.error(), err, errLen);
  auto d = describeMachine(*m);
  if (!d) return fail(d.error(), err, errLen);
  auto share = shareFromNode(*node);
  if (!share) return fail(share.error(), err, errLen);
  GraphRequest req;
  req.pattern = request->pattern;
  req.crossNic = request->cross_nic;
  req.minChannels = request->min_channels;
  req.maxChannels = request->max_channels;
  auto g = computeGraph(*d, *share, systemXml, req, *disable);
  if (!g) return fail(g.error(), err, errLen);
  return answerText(std::move(g->xml), "compute_graph", graphOut, err, errLen);
}

// UltraServer pods only (trn2-ultraserver, trn3-switch-v1): pod node id
// = podId * podNodes + position (docs/internals/topo-neuron.md, "The plugin");
// podNodeOrder decides.
nccom_plugin_status_t orderNodes(void* ctx, const nccom_topo_machine_t* m, int32_t nNodes,
                                 const int32_t* podNodeIds, int32_t* orderOut, char* err,
                                 size_t errLen) {
  (void)ctx;
  if (m == nullptr || (nNodes > 0 && (podNodeIds == nullptr || orderOut == nullptr)) ||
      nNodes < 0) {
    put_text(err, errLen, "topo_neuron order_nodes: a NULL argument or a negative node count");
    return NCCOM_PLUGIN_INVALID_ARGUMENT;
  }
  auto variant = machineVariant(*m);
  if (!variant) return fail(variant.error(), err, errLen);
  const PodGeometry geo = podGeometry(*variant);
  if (geo.layout == PodLayout::None || geo.podNodes < 1) {
    put_text(err, errLen,
             std::string("topo_neuron: platform ") + platformSpec(*variant).name +
                 " has no pods; nodes keep their index order");
    return NCCOM_PLUGIN_UNSUPPORTED;
  }
  std::vector<PodNode> nodes;
  for (int32_t n = 0; n < nNodes; ++n) {
    const int32_t id = podNodeIds[n];
    if (id < 0) {
      put_text(err, errLen,
               "topo_neuron order_nodes: node " + std::to_string(n) +
                   " has the negative pod node id " + std::to_string(id));
      return NCCOM_PLUGIN_INVALID_ARGUMENT;
    }
    nodes.push_back({n, id / geo.podNodes, id % geo.podNodes});
  }
  auto order = podNodeOrder(nodes, geo);
  if (!order) return fail(order.error(), err, errLen);
  if (static_cast<int32_t>(order->size()) != nNodes) {
    put_text(err, errLen, "topo_neuron order_nodes: the pod order lost nodes");
    return NCCOM_PLUGIN_ERROR;
  }
  for (int32_t n = 0; n < nNodes; ++n) orderOut[n] = (*order)[static_cast<size_t>(n)];
  return NCCOM_PLUGIN_OK;
}

nccom_plugin_status_t listPlatforms(void* ctx, char** xmlOut, char* err, size_t errLen) {
  (void)ctx;
  if (xmlOut == nullptr) {
    put_text(err, errLen, "topo_neuron list_platforms: xml_out is NULL");
    return NCCOM_PLUGIN_INVALID_ARGUMENT;
  }
  *xmlOut = nullptr;
  return answerText(platformsXml(), "list_platforms", xmlOut, err, errLen);
}

nccom_plugin_status_t describeNode(void* ctx, const nccom_topo_machine_t* m, char** xmlOut,
                                   char* err, size_t errLen) {
  (void)ctx;
  if (m == nullptr || xmlOut == nullptr) {
    put_text(err, errLen, "topo_neuron describe_node: machine or xml_out is NULL");
    return NCCOM_PLUGIN_INVALID_ARGUMENT;
  }
  *xmlOut = nullptr;
  return answerText(nodeXml(*m), "describe_node", xmlOut, err, errLen);
}

// The slots: every body runs guarded, so no exception leaves the plugin.
nccom_plugin_status_t neuronProbe(void* ctx, const nccom_topo_machine_t* m, char* why,
                                  size_t whyLen) {
  return guarded(kWho, "probe", why, whyLen, [&] { return probe(ctx, m, why, whyLen); });
}

nccom_plugin_status_t neuronSystemXml(void* ctx, const nccom_topo_machine_t* m,
                                      const nccom_topo_node_t* node, char** xmlOut, char* err,
                                      size_t errLen) {
  return guarded(kWho, "get_system_xml", err, errLen,
                 [&] { return systemXml(ctx, m, node, xmlOut, err, errLen); });
}

nccom_plugin_status_t neuronGraph(void* ctx, const nccom_topo_machine_t* m,
                                  const nccom_topo_node_t* node, const char* systemXml,
                                  const nccom_topo_graph_request_t* request, char** graphOut,
                                  char* err, size_t errLen) {
  return guarded(kWho, "compute_graph", err, errLen,
                 [&] { return graph(ctx, m, node, systemXml, request, graphOut, err, errLen); });
}

nccom_plugin_status_t neuronOrderNodes(void* ctx, const nccom_topo_machine_t* m, int32_t nNodes,
                                       const int32_t* podNodeIds, int32_t* orderOut, char* err,
                                       size_t errLen) {
  return guarded(kWho, "order_nodes", err, errLen,
                 [&] { return orderNodes(ctx, m, nNodes, podNodeIds, orderOut, err, errLen); });
}

nccom_plugin_status_t neuronListPlatforms(void* ctx, char** xmlOut, char* err, size_t errLen) {
  return guarded(kWho, "list_platforms", err, errLen,
                 [&] { return listPlatforms(ctx, xmlOut, err, errLen); });
}

nccom_plugin_status_t neuronDescribeNode(void* ctx, const nccom_topo_machine_t* m, char** xmlOut,
                                         char* err, size_t errLen) {
  return guarded(kWho, "describe_node", err, errLen,
                 [&] { return describeNode(ctx, m, xmlOut, err, errLen); });
}

void neuronFree(void* ctx, char* text) {
  (void)ctx;
  std::free(text);
}

const nccom_topo_ops_t kOps = {{sizeof(nccom_topo_ops_t), 0, neuronInit, neuronFini},
                               NCCOM_TOPO_OPS_VERSION,
                               0,
                               neuronProbe,
                               neuronSystemXml,
                               neuronGraph,
                               neuronFree,
                               neuronOrderNodes,
                               neuronListPlatforms,
                               neuronDescribeNode};

}  // namespace

extern "C" NCCOM_PLUGIN_EXPORT const nccom_plugin_descriptor_t nccom_plugin = {
    NCCOM_PLUGIN_ABI_VERSION,
    sizeof(nccom_plugin_descriptor_t),
    NCCOM_PLUGIN_KIND_TOPOLOGY,
    0,
    "neuron",
    "1.0.0",
    NCCOM_CAP_TOPO_SYSTEM | NCCOM_CAP_TOPO_GRAPH,
    &kOps.head,
    &kKnobTable};
