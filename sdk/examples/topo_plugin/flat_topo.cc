// A third-party topology plugin: every node is a flat PCIe host — one CPU,
// one PCIe switch, each local rank's core on its own <pci> under it, and one
// NIC — and the rings follow the local ranks in order, the same on every
// channel. Built with the installed SDK alone: the ABI (nccom/topo_plugin.h),
// the topology model the host reads the answers with (nccom/topo/*.h, library
// nccom::sdk_topo), results, logging and the C boundary (nccom/util/*.h):
// every slot that can throw runs in nccom::util::guarded.
//
// Every answer is checked through the same model before it leaves: a
// <system> that would not build, or a graph naming a rank the system does not
// hold, is an error here rather than in the host.
//
// It names one platform, "flat", for tools that simulate a cluster without a
// runtime (list_platforms, describe_node): `nccom-topo --plugins
// <this .so> --platform flat --nodes 4` computes its rings.
//
// It declares two knobs of its own (nccom/knob.h), set as
// [plugins.flat] channels / nic_speed_mbps in the host's TOML, in a
// [clusters.<name>.plugins.flat] section, or with FLAT_TOPO_CHANNELS /
// FLAT_TOPO_NIC_SPEED_MBPS; the host checks and resolves them before init,
// and `nccom-config` lists them.
#include <nccom/knob.h>
#include <nccom/topo/graph_xml.h>
#include <nccom/topo/system.h>
#include <nccom/topo/xml.h>
#include <nccom/topo_plugin.h>
#include <nccom/util/boundary.h>
#include <nccom/util/knob_value.h>
#include <nccom/util/log.h>
#include <nccom/util/result.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <new>
#include <string>

namespace {

using nccom::Error;
using nccom::make_error;
using nccom::Result;
using nccom::Status;
namespace topo = nccom::topo;

// The knobs. The defaults are texts as an environment value would be.
const char* const kEnvChannels[] = {"FLAT_TOPO_CHANNELS", nullptr};
const char* const kEnvNicSpeed[] = {"FLAT_TOPO_NIC_SPEED_MBPS", nullptr};
const nccom_knob_t kKnobs[] = {
    {"channels", NCCOM_KNOB_INT, 0, "2",
     "Rings the flat topology asks for on every node, within what the host allows.", 1, 32, nullptr,
     kEnvChannels},
    {"nic_speed_mbps", NCCOM_KNOB_INT, 0, "10000",
     "The speed, in Mbit/s, the flat topology gives each node's NIC; the host compares widths "
     "only.",
     1000, 1600000, nullptr, kEnvNicSpeed},
};
const nccom_knob_table_t kKnobTable = NCCOM_KNOB_TABLE(kKnobs);

// What init read from the host; the plugin's context.
struct Settings {
  int channels = 2;
  int nic_speed_mbps = 10000;
};
constexpr const char* kSwitchBusId = "0000:10:00.0";
constexpr const char* kNicBusId = "0000:80:00.0";

// Every message this plugin hands the host starts with its name.
constexpr const char* kWho = "flat topology";

// The Error's status and message (after kWho) for the host (nccom/util/boundary.h).
nccom_plugin_status_t fail(const Error& e, char* err, size_t len) {
  return nccom::util::fail(make_error(e.status, std::string(kWho) + ": " + e.message), err, len);
}

char* dup_text(const std::string& s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out != nullptr) std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

// The bus id of local rank i's core: 32 device numbers per bus from bus 0x20.
std::string core_bus_id(int i) {
  char id[16];
  std::snprintf(id, sizeof id, "0000:%02x:%02x.0", 0x20 + i / 32, i % 32);
  return id;
}

Status set_all(topo::XmlNode& node,
               std::initializer_list<std::pair<const char*, std::string>> attributes) {
  for (const auto& [key, value] : attributes) {
    if (auto st = node.setAttribute(key, value); !st) return st;
  }
  return {};
}

Result<topo::XmlNode*> add(topo::XmlNode& parent, const char* name,
                           std::initializer_list<std::pair<const char*, std::string>> attributes) {
  auto child = parent.addChild(name);
  if (!child) return child.take_error();
  if (auto st = set_all(**child, attributes); !st) return st.take_error();
  return *child;
}

Result<std::string> system_xml(const Settings& settings, const nccom_topo_node_t& node) {
  if (node.n_local < 1 || node.n_local > topo::kMaxLocalRanks || node.local_ranks == nullptr) {
    return make_error(NRT_INVALID, "the node has " + std::to_string(node.n_local) +
                                       " local ranks (1 to " +
                                       std::to_string(topo::kMaxLocalRanks) + " described)");
  }
  topo::XmlDocument doc;
  doc.source = "flat <system>";
  doc.root = std::make_unique<topo::XmlNode>("system");
  if (auto st = doc.root->setInt("version", 1); !st) return st.take_error();
  auto cpu = add(*doc.root, "cpu",
                 {{"numaid", "0"},
                  {"arch", "x86_64"},
                  {"vendor", "GenuineIntel"},
                  {"familyid", "6"},
                  {"modelid", "85"}});
  if (!cpu) return cpu.take_error();
  const std::pair<const char*, std::string> gen4x16[] = {{"link_speed", "16 GT/s"},
                                                         {"link_width", "16"}};
  auto sw =
      add(**cpu, "pci", {{"busid", kSwitchBusId}, {"class", "0x060400"}, gen4x16[0], gen4x16[1]});
  if (!sw) return sw.take_error();
  for (int i = 0; i < node.n_local; ++i) {
    auto pci = add(**sw, "pci",
                   {{"busid", core_bus_id(i)}, {"class", "0x030000"}, gen4x16[0], gen4x16[1]});
    if (!pci) return pci.take_error();
    auto gpu = add(**pci, "gpu",
                   {{"dev", std::to_string(i)},
                    {"rank", std::to_string(node.local_ranks[i])},
                    {"sm", "1"},
                    {"gdr", "1"}});
    if (!gpu) return gpu.take_error();
  }
  auto nic_pci =
      add(**sw, "pci", {{"busid", kNicBusId}, {"class", "0x020000"}, gen4x16[0], gen4x16[1]});
  if (!nic_pci) return nic_pci.take_error();
  auto nic = (*nic_pci)->addChild("nic");
  if (!nic) return nic.take_error();
  auto net = add(**nic, "net",
                 {{"dev", "0"},
                  {"speed", std::to_string(settings.nic_speed_mbps)},
                  {"port", "1"},
                  {"guid", "0x1"},
                  {"gdr", "1"},
                  {"maxconn", "65536"}});
  if (!net) return net.take_error();
  // The answer must be a system the host can build.
  if (auto system = topo::buildSystem(doc); !system) return system.take_error();
  return topo::writeXml(*doc.root);
}

Result<std::string> ring_xml(const Settings& settings, const char* system_text,
                             const nccom_topo_graph_request_t& request) {
  auto doc = topo::parseXml(system_text, "the host's <system>");
  if (!doc) return doc.take_error();
  auto system = topo::buildSystem(*doc);
  if (!system) return system.take_error();
  topo::TopoGraph graph;
  graph.id = 0;
  graph.pattern = topo::SearchPattern::Ring;
  graph.crossNic = 0;
  graph.minChannels = request.min_channels;
  graph.maxChannels = request.max_channels;
  graph.nChannels = std::clamp(settings.channels, std::max(1, request.min_channels),
                               std::max(1, request.max_channels));
  graph.speedIntra = 12.0F;
  graph.speedInter = static_cast<float>(settings.nic_speed_mbps) / 8000.0F;
  graph.typeIntra = topo::PathType::PIX;
  graph.typeInter = topo::PathType::PIX;
  // The ranks the host kept in its copy (it may have trimmed some), by dev.
  std::vector<int> ranks;
  for (const topo::TopoNode& gpu : system->of(topo::NodeType::GPU)) ranks.push_back(gpu.gpu.rank);
  if (ranks.empty()) return make_error(NRT_INVALID, "the host's <system> has no <gpu>");
  graph.nLocal = static_cast<int>(ranks.size());
  const int nets = system->count(topo::NodeType::NET);
  for (int c = 0; c < graph.nChannels; ++c) {
    graph.intra.insert(graph.intra.end(), ranks.begin(), ranks.end());
    const int nic = nets > 0 ? c % nets : 0;
    graph.inter.push_back({nic, nic});
  }
  auto out = topo::graphsToXml({&graph}, *system);
  if (!out) return out.take_error();
  return topo::writeXml(*out->root);
}

nccom_plugin_status_t flat_init(const nccom_host_api_t* host, void** ctx) {
  if (ctx == nullptr) return NCCOM_PLUGIN_INVALID_ARGUMENT;
  nccom::util::install_logger(host);
  auto* settings = new (std::nothrow) Settings;
  if (settings == nullptr) return NCCOM_PLUGIN_SYSTEM_ERROR;
  if (!nccom::util::knob_int(host, "channels", settings->channels, settings->channels) ||
      !nccom::util::knob_int(host, "nic_speed_mbps", settings->nic_speed_mbps,
                             settings->nic_speed_mbps)) {
    delete settings;
    return NCCOM_PLUGIN_INVALID_ARGUMENT;
  }
  *ctx = settings;
  NCCOM_SDK_INFO(NCCOM_SUBSYS_INIT | NCCOM_SUBSYS_GRAPH,
                 "flat topology: every node is one PCIe switch with its cores and one NIC; "
                 "channels %d, NIC %d Mbit/s",
                 settings->channels, settings->nic_speed_mbps);
  return NCCOM_PLUGIN_OK;
}

void flat_fini(void* ctx) { delete static_cast<Settings*>(ctx); }

nccom_plugin_status_t flat_probe(void*, const nccom_topo_machine_t* machine, char* why,
                                 size_t why_len) {
  if (machine == nullptr || machine->device_count < 1) {
    nccom::util::put_text(why, why_len, "flat topology: no Neuron device on this machine");
    return NCCOM_PLUGIN_UNSUPPORTED;
  }
  return NCCOM_PLUGIN_OK;
}

nccom_plugin_status_t flat_get_system_xml(void* ctx, const nccom_topo_machine_t* machine,
                                          const nccom_topo_node_t* node, char** xml_out, char* err,
                                          size_t err_len) {
  if (ctx == nullptr || machine == nullptr || node == nullptr || xml_out == nullptr)
    return NCCOM_PLUGIN_INVALID_ARGUMENT;
  return nccom::util::guarded(kWho, "get_system_xml", err, err_len, [&] {
    auto text = system_xml(*static_cast<const Settings*>(ctx), *node);
    if (!text) return fail(text.error(), err, err_len);
    *xml_out = dup_text(*text);
    if (*xml_out == nullptr) return NCCOM_PLUGIN_SYSTEM_ERROR;
    NCCOM_SDK_INFO(NCCOM_SUBSYS_GRAPH, "flat topology: node %d of %d, %d local ranks", node->node,
                   node->n_nodes, node->n_local);
    return NCCOM_PLUGIN_OK;
  });
}

nccom_plugin_status_t flat_compute_graph(void* ctx, const nccom_topo_machine_t*,
                                         const nccom_topo_node_t* node, const char* system_text,
                                         const nccom_topo_graph_request_t* request,
                                         char** graph_out, char* err, size_t err_len) {
  if (ctx == nullptr || node == nullptr || system_text == nullptr || request == nullptr ||
      graph_out == nullptr)
    return NCCOM_PLUGIN_INVALID_ARGUMENT;
  if (request->pattern != static_cast<int>(topo::SearchPattern::Ring)) {
    nccom::util::put_text(err, err_len, "flat topology: only RING graphs (pattern 4) are searched");
    return NCCOM_PLUGIN_UNSUPPORTED;
  }
  return nccom::util::guarded(kWho, "compute_graph", err, err_len, [&] {
    auto text = ring_xml(*static_cast<const Settings*>(ctx), system_text, *request);
    if (!text) return fail(text.error(), err, err_len);
    *graph_out = dup_text(*text);
    return *graph_out != nullptr ? NCCOM_PLUGIN_OK : NCCOM_PLUGIN_SYSTEM_ERROR;
  });
}

// For tools without a runtime (nccom-topo --plugins ... --platform flat):
// the one platform this plugin names, with the machine it would be handed,
// and its model of that machine's node — one core per device, every device
// and the NIC under one PCIe switch, no device links.
constexpr int kFlatDevices[] = {1, 2, 4, 8};

Result<std::string> platforms_xml() {
  topo::XmlNode root("platforms");
  auto row = add(root, "platform",
                 {{"name", "flat"},
                  {"codename", "FLAT"},
                  {"generation", "v1"},
                  {"instance_family", "0"},
                  {"instance_size", "9"},
                  {"arch_name", "flat"},
                  {"device_revision", "v1"},
                  {"pod_type", "0"},
                  {"pod_size", "1"},
                  {"devices", "1,2,4,8"},
                  {"default_devices", "4"},
                  {"lnc", "1"},
                  {"default_lnc", "1"}});
  if (!row) return row.take_error();
  return topo::writeXml(root);
}

Result<std::string> node_xml(const nccom_topo_machine_t& machine) {
  const int n = machine.device_count;
  if (std::find(std::begin(kFlatDevices), std::end(kFlatDevices), n) == std::end(kFlatDevices))
    return make_error(NRT_INVALID,
                      "a flat node has 1, 2, 4 or 8 devices, not " + std::to_string(n));
  if (machine.vcore_size > 1)
    return make_error(NRT_INVALID, "a flat node has one core per device (LNC 1), not " +
                                       std::to_string(machine.vcore_size));
  topo::XmlNode root("node");
  if (auto st = set_all(root, {{"platform", "flat"},
                               {"devices", std::to_string(n)},
                               {"cores_per_device", "1"},
                               {"lnc", "1"},
                               {"vcores_per_device", "1"}});
      !st)
    return st.take_error();
  std::string all;
  for (int d = 0; d < n; ++d) {
    const std::string id = std::to_string(d);
    auto dev = add(root, "device",
                   {{"id", id}, {"mla", id}, {"numa", "0"}, {"pci_switch", "0"}, {"vcores", id}});
    if (!dev) return dev.take_error();
    all += (d == 0 ? "" : ",") + id;
  }
  auto nic = add(root, "nic", {{"id", "0"}, {"numa", "0"}, {"pci_switch", "0"}, {"devices", all}});
  if (!nic) return nic.take_error();
  return topo::writeXml(root);
}

nccom_plugin_status_t answer(const Result<std::string>& text, char** out, char* err,
                             size_t err_len) {
  if (!text) return fail(text.error(), err, err_len);
  *out = dup_text(*text);
  return *out != nullptr ? NCCOM_PLUGIN_OK : NCCOM_PLUGIN_SYSTEM_ERROR;
}

nccom_plugin_status_t flat_list_platforms(void*, char** xml_out, char* err, size_t err_len) {
  if (xml_out == nullptr) return NCCOM_PLUGIN_INVALID_ARGUMENT;
  return nccom::util::guarded(kWho, "list_platforms", err, err_len,
                              [&] { return answer(platforms_xml(), xml_out, err, err_len); });
}

nccom_plugin_status_t flat_describe_node(void*, const nccom_topo_machine_t* machine, char** xml_out,
                                         char* err, size_t err_len) {
  if (machine == nullptr || xml_out == nullptr) return NCCOM_PLUGIN_INVALID_ARGUMENT;
  return nccom::util::guarded(kWho, "describe_node", err, err_len,
                              [&] { return answer(node_xml(*machine), xml_out, err, err_len); });
}

void flat_free_text(void*, char* text) { std::free(text); }

const nccom_topo_ops_t kOps = {
    {sizeof(nccom_topo_ops_t), 0, flat_init, flat_fini},
    NCCOM_TOPO_OPS_VERSION,
    0,
    flat_probe,
    flat_get_system_xml,
    flat_compute_graph,
    flat_free_text,
    nullptr,  // order_nodes: no pods, the nodes keep their index order
    flat_list_platforms,
    flat_describe_node,
};

}  // namespace

extern "C" NCCOM_PLUGIN_EXPORT const nccom_plugin_descriptor_t nccom_plugin = {
    NCCOM_PLUGIN_ABI_VERSION,
    sizeof(nccom_plugin_descriptor_t),
    NCCOM_PLUGIN_KIND_TOPOLOGY,
    0,
    "flat",
    "1.0.0",
    NCCOM_CAP_TOPO_SYSTEM | NCCOM_CAP_TOPO_GRAPH,
    &kOps.head,
    &kKnobTable,
};
