// The host's own knobs. Plugins declare theirs in their own tables
// (nccom/knob.h), resolved when they are loaded (plugin_knobs.h). config/nccom.toml mirrors this
// table (a test checks that the two cannot drift apart).
#include "config/knob.h"

#include <cstdint>
#include <string_view>

namespace nccom::config {
namespace {

// The upper bound of every duration knob in milliseconds: 24 hours. A larger
// value is no longer a timeout anyone waits for, and the bound keeps
// steady_clock::now() + the value far from overflowing (which would make a
// deadline lie in the past and expire at once).
constexpr std::int64_t kMaxDurationMs = 24LL * 60 * 60 * 1000;

constexpr std::string_view kLogLevels[] = {"NONE", "VERSION", "WARN", "INFO", "ABORT", "TRACE"};
// The subsystem names of NCCL_DEBUG_SUBSYS, as host/log parses them (a test
// in tests/host/core holds the two lists together).
constexpr std::string_view kLogSubsystems[] = {"INIT",  "COLL",   "P2P",       "SHM",   "NET",
                                               "GRAPH", "TUNING", "ENV",       "ALLOC", "CALL",
                                               "PROXY", "NVLS",   "BOOTSTRAP", "REG",   "ALL"};
constexpr std::string_view kSocketFamilies[] = {"", "AF_INET", "AF_INET6"};
constexpr std::string_view kLogStreams[] = {"stdout", "stderr"};
constexpr std::string_view kEfaPresence[] = {"auto", "yes", "no"};

constexpr std::string_view kEnvDebug[] = {"NCCL_DEBUG"};
constexpr std::string_view kEnvDebugSubsys[] = {"NCCL_DEBUG_SUBSYS"};
constexpr std::string_view kEnvDebugFile[] = {"NCCL_DEBUG_FILE"};
constexpr std::string_view kEnvDebugStream[] = {"NCCOM_DEBUG_STREAM"};
constexpr std::string_view kEnvSockTimeout[] = {"NEURON_CCOM_SOCK_TIMEOUT"};
constexpr std::string_view kEnvIfname[] = {"CCOM_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME"};
constexpr std::string_view kEnvFamily[] = {"CCOM_SOCKET_FAMILY", "NCCL_SOCKET_FAMILY"};
constexpr std::string_view kEnvRootCommId[] = {"NEURON_RT_ROOT_COMM_ID"};
constexpr std::string_view kEnvNetPlugin[] = {"NCCL_NET_PLUGIN"};
constexpr std::string_view kEnvNetPluginLayout[] = {"NCCOM_NET_PLUGIN_LAYOUT"};
constexpr std::string_view kEnvNetUseRuntime[] = {"NCCOM_NET_USE_RUNTIME_PLUGIN"};
constexpr std::string_view kEnvEfaForkSafe[] = {"FI_EFA_FORK_SAFE"};
constexpr std::string_view kEnvEfa[] = {"NCCOM_NET_EFA"};
constexpr std::string_view kNetLayouts[] = {"neuron", "nvidia"};
constexpr std::string_view kNetProbes[] = {"third-party", "all", "off"};
constexpr std::string_view kEnvNetProbe[] = {"NCCOM_NET_PROBE"};
constexpr std::string_view kEnvNetProbeTimeout[] = {"NCCOM_NET_PROBE_TIMEOUT_MS"};
constexpr std::string_view kEnvPluginPath[] = {"NCCOM_PLUGIN_PATH"};
constexpr std::string_view kEnvHandshake[] = {"NCCOM_BOOTSTRAP_TIMEOUT_MS"};
constexpr std::string_view kEnvProtocol[] = {"NCCOM_BOOTSTRAP_PROTOCOL"};
constexpr std::string_view kEnvSecret[] = {"NCCOM_BOOTSTRAP_SECRET"};
constexpr std::string_view kEnvHostId[] = {"NCCL_HOSTID"};
constexpr std::string_view kProtocols[] = {"auto", "flat", "hierarchical"};
constexpr std::string_view kEnvTopoPlugins[] = {"NCCOM_TOPOLOGY_PLUGINS"};
constexpr std::string_view kEnvTopoFile[] = {"NCCL_TOPO_FILE"};
constexpr std::string_view kEnvTopoDump[] = {"NCCL_TOPO_DUMP_FILE"};
constexpr std::string_view kEnvGraphFile[] = {"NCCL_GRAPH_FILE"};
constexpr std::string_view kEnvNewAlgorithm[] = {"NCCL_GRAPH_USE_NEW_ALGORITHM"};
constexpr std::string_view kEnvP2pLevel[] = {"NCCL_P2P_LEVEL"};
constexpr std::string_view kEnvP2pDisable[] = {"NCCL_P2P_DISABLE"};
constexpr std::string_view kEnvTransportPlugins[] = {"NCCOM_TRANSPORT_PLUGINS"};
constexpr std::string_view kEnvConnectTimeout[] = {"NCCOM_TRANSPORT_CONNECT_TIMEOUT_MS"};
constexpr std::string_view kEnvHealth[] = {"NCCOM_HEALTH", "NCCL_RAS_ENABLE"};
constexpr std::string_view kEnvHealthAddr[] = {"NCCOM_RAS_ADDR", "NCCL_RAS_ADDR"};
constexpr std::string_view kEnvHealthKeepAlive[] = {"NCCOM_HEALTH_KEEPALIVE_MS"};
constexpr std::string_view kEnvHealthFactor[] = {"NCCOM_HEALTH_TIMEOUT_FACTOR",
                                                 "NCCL_RAS_TIMEOUT_FACTOR"};
constexpr std::string_view kEnvHealthQuery[] = {"NCCOM_HEALTH_QUERY_TIMEOUT_MS"};
constexpr std::string_view kEnvStallWarnS[] = {"NCCOM_HEALTH_STALL_WARN_S"};
constexpr std::string_view kEnvStallFailS[] = {"NCCOM_HEALTH_STALL_FAIL_S"};
constexpr std::int64_t kMaxDurationS = kMaxDurationMs / 1000;

constexpr Knob kHostKnobs[] = {
    {.key = "log.level",
     .env = kEnvDebug,
     .type = Type::Enum,
     .default_text = "WARN",
     .help = "Verbosity of libnccom's log: NONE, VERSION, WARN, INFO, ABORT or TRACE, in "
             "any letter case. NONE prints nothing; each later level prints more. WARN "
             "lines also reach the runtime's log, whatever the level. A bad NCCL_DEBUG is "
             "ignored with a WARN (as NCCL ignores it); a bad value in the file is an error.",
     .allowed = kLogLevels,
     .flags = kCaseInsensitive | kEnvFallsBack},
    {.key = "log.subsys",
     .env = kEnvDebugSubsys,
     .type = Type::String,
     .default_text = "INIT,ENV,BOOTSTRAP",
     .help = "Comma-separated subsystems whose INFO and TRACE lines are printed (INIT, "
             "COLL, P2P, SHM, NET, GRAPH, TUNING, ENV, ALLOC, CALL, PROXY, NVLS, "
             "BOOTSTRAP, REG or ALL). A leading ^ prints every subsystem except the "
             "listed ones. Unknown names in NCCL_DEBUG_SUBSYS are dropped with a WARN (as "
             "NCCL drops them); in the file they are an error.",
     .allowed = kLogSubsystems,
     .flags = kNameList | kCaseInsensitive | kEnvFallsBack},
    {.key = "log.file",
     .env = kEnvDebugFile,
     .type = Type::String,
     .default_text = "",
     .help = "File that receives the log lines; %h expands to the host name and %p to "
             "the process id. Empty means the stream of log.stream."},
    {.key = "log.stream",
     .env = kEnvDebugStream,
     .type = Type::Enum,
     .default_text = "stdout",
     .help = "Where log lines go when log.file is empty or cannot be opened: stdout (as "
             "NCCL) or stderr. nccom's tools set stderr, so their own output on stdout "
             "never mixes with log lines. A bad NCCOM_DEBUG_STREAM is ignored with a WARN.",
     .allowed = kLogStreams,
     .flags = kCaseInsensitive | kEnvFallsBack},
    {.key = "bootstrap.socket_timeout_ms",
     .env = kEnvSockTimeout,
     .type = Type::Int,
     .default_text = "120000",
     .help = "Time limit in milliseconds of every bootstrap socket operation (connect, "
             "accept, send and receive). When it expires the error names the peer "
             "that did not answer.",
     .min = 1,
     .max = kMaxDurationMs},
    {.key = "bootstrap.handshake_timeout_ms",
     .env = kEnvHandshake,
     .type = Type::Int,
     .default_text = "120000",
     .help = "Time limit in milliseconds for a communicator's whole bootstrap handshake: "
             "every rank must have checked in with the root by then. On expiry the "
             "error lists the ranks that are still missing.",
     .min = 1,
     .max = kMaxDurationMs},
    {.key = "bootstrap.protocol",
     .env = kEnvProtocol,
     .type = Type::Enum,
     .default_text = "auto",
     .help = "Bootstrap handshake: flat (every rank checks in with the root), "
             "hierarchical (one leader per host checks in for its host) or auto "
             "(hierarchical for a global communicator larger than one instance). "
             "All ranks of a communicator must use the same setting.",
     .allowed = kProtocols,
     .flags = kCaseInsensitive},
    {
        .key = "bootstrap.secret",
        .env = kEnvSecret,
        .type = Type::String,
        .default_text = "",
        .help = "Shared secret for communicators whose root is given as host:port "
                "(NEURON_RT_ROOT_COMM_ID), which cannot carry a random one. Empty derives "
                "it from the root address, which keeps other jobs out but is not secret; "
                "set it through the launcher to authenticate.",
        .flags = kJobIdentity,
    },
    {
        .key = "bootstrap.host_id",
        .env = kEnvHostId,
        .type = Type::String,
        .default_text = "",
        .help = "Overrides this host's identity (by default the host name and boot id), "
                "which decides which ranks share a host.",
    },
    {.key = "bootstrap.socket_ifname",
     .env = kEnvIfname,
     .type = Type::String,
     .default_text = "",
     .help = "Network interfaces the bootstrap may use: comma-separated name prefixes, "
             "a leading ^ excludes the listed interfaces and a leading = requires exact "
             "names. Empty lets libnccom choose."},
    {.key = "bootstrap.socket_family",
     .env = kEnvFamily,
     .type = Type::Enum,
     .default_text = "",
     .help = "Address family of the bootstrap sockets: AF_INET or AF_INET6. Empty "
             "accepts either.",
     .allowed = kSocketFamilies},
    {.key = "bootstrap.root_comm_id",
     .env = kEnvRootCommId,
     .type = Type::String,
     .default_text = "",
     .help = "Address of the world's bootstrap root as host:port. The runtime reads "
             "the same variable and passes the address in; this value is used only "
             "when the runtime passes none.",
     .flags = kJobIdentity},
    {.key = "net.plugin",
     .env = kEnvNetPlugin,
     .type = Type::String,
     .default_text = "",
     .help = "Network plugin used when the runtime does not supply one: a plugin name "
             "such as socket, or the path of a shared object. Empty means the "
             "runtime's network if it supplies one, otherwise the socket plugin."},
    {.key = "net.plugin_layout",
     .env = kEnvNetPluginLayout,
     .type = Type::Enum,
     .default_text = "neuron",
     .help = "Header family the plugin named by net.plugin was built against: neuron (the "
             "Neuron ncclNet_v6, v5 and v4 tables that libnccom-net.so exports) or nvidia "
             "(upstream NCCL's tables of the same names, whose slots are in another order). "
             "Nothing in the file tells them apart, so an NVIDIA-layout plugin is used only "
             "when this says so. The runtime's own plugin is always read as neuron.",
     .allowed = kNetLayouts,
     .flags = kCaseInsensitive},
    {.key = "net.use_runtime_plugin",
     .env = kEnvNetUseRuntime,
     .type = Type::Bool,
     .default_text = "true",
     .help = "Use the network plugin the runtime loaded (libnccom-net.so, handed over by "
             "nrt_get_libnccl_net) when it supplies one. false skips it, so net.plugin or "
             "the socket plugin is used even where the runtime has one."},
    {.key = "net.probe",
     .env = kEnvNetProbe,
     .type = Type::Enum,
     .default_text = "third-party",
     .help = "Before a net plugin is used, run its discovery calls (init, devices, "
             "getProperties) once in a short-lived child process, where a crash, an exit or a "
             "call that does not return skips the plugin with a warning instead of taking the "
             "process down: third-party probes every plugin but nccom's own (the files beside "
             "libnccom.so and in its plugin directory), all probes those too, off probes none.",
     .allowed = kNetProbes,
     .flags = kCaseInsensitive},
    {.key = "net.probe_timeout_ms",
     .env = kEnvNetProbeTimeout,
     .type = Type::Int,
     .default_text = "60000",
     .help = "How long the probe of net.probe may take in milliseconds; a plugin whose "
             "discovery calls have not returned by then is skipped, naming the call.",
     .min = 1,
     .max = kMaxDurationMs},
    {.key = "net.efa_fork_safe",
     .env = kEnvEfaForkSafe,
     .type = Type::String,
     .default_text = "",
     .help = "Mirror of libfabric's FI_EFA_FORK_SAFE, read only for a check: on Linux "
             "kernels older than 5.14 libnccom warns when it is empty, since EFA then needs "
             "it. libfabric reads the environment variable itself; setting it here alone "
             "only silences the warning."},
    {.key = "net.efa",
     .env = kEnvEfa,
     .type = Type::Enum,
     .default_text = "auto",
     .help = "Whether this host has EFA devices, which decides how a failed start of the "
             "runtime's libfabric plugin (libnccom-net.so) is reported: as a WARN where EFA "
             "is present (the plugin should have worked), as an INFO where it is not (the "
             "next plugin is the expected network). auto: present when a device under "
             "/sys/class/infiniband is bound to the efa driver.",
     .allowed = kEfaPresence,
     .flags = kCaseInsensitive},
    {.key = "plugins.search_path",
     .env = kEnvPluginPath,
     .type = Type::String,
     .default_text = "",
     .help = "Colon-separated directories searched for plugin shared objects, in "
             "order, before the installed plugin directory. Empty searches only the "
             "installed directory."},
    {.key = "topology.plugins",
     .env = kEnvTopoPlugins,
     .type = Type::String,
     .default_text = "topo_neuron,topo_nccl",
     .help = "Comma-separated topology plugins, in the order they are asked to describe "
             "the machine and to search the rings: names (libnccom-<name>.so in the "
             "plugin directories) or paths. topo_neuron covers Trn1, Inf2, Trn2, Trn3 and the "
             "reference runtime's emulated platform; topo_nccl reads topology.file and detects "
             "other hosts."},
    {.key = "topology.file",
     .env = kEnvTopoFile,
     .type = Type::String,
     .default_text = "",
     .help = "An NCCL topology XML file that describes every node instead of the platform "
             "tables or host detection (read by the nccl topology plugin). Empty: unused."},
    {.key = "topology.dump_file",
     .env = kEnvTopoDump,
     .type = Type::String,
     .default_text = "",
     .help = "Where rank 0 writes the topology XML it used (NCCL's dump layout, loadable "
             "as topology.file). Empty: no dump."},
    {.key = "graph.file",
     .env = kEnvGraphFile,
     .type = Type::String,
     .default_text = "",
     .help = "An NCCL graph XML file whose RING graph (id 0) is used instead of searching. "
             "Empty: search."},
    {.key = "graph.use_new_algorithm",
     .env = kEnvNewAlgorithm,
     .type = Type::Int,
     .default_text = "-1",
     .help = "Ring search: 1 the NEW priority search of the Neuron platforms, 0 the OLD "
             "bandwidth-tier search, -1 the default (plugins.neuron.default_new_algorithm; Trn3 "
             "on NeuronSwitch-v1 always uses NEW).",
     .min = -1,
     .max = 1},
    {.key = "graph.p2p_level",
     .env = kEnvP2pLevel,
     .type = Type::String,
     .default_text = "",
     .help = "Highest path type over which two local ranks use P2P: LOC, NVL, NVB, PIX, "
             "PXB, PHB, SYS, or 0-4 as in NCCL. Empty: the CPU-architecture default."},
    {.key = "graph.p2p_disable",
     .env = kEnvP2pDisable,
     .type = Type::String,
     .default_text = "",
     .help = "Set to 1 to disable P2P between local ranks (as NCCL_P2P_LEVEL=LOC). Empty or 0: "
             "enabled."},
    {.key = "transport.plugins",
     .env = kEnvTransportPlugins,
     .type = Type::String,
     .default_text = "p2p,net_neuron",
     .help = "Comma-separated transport plugins, in the order they are asked whether they "
             "can connect two ranks: names (libnccom-<name>.so in the plugin directories) "
             "or paths; the first that can connect a pair carries it. p2p: ranks of one "
             "server, reached directly by the device (off with NCCL_P2P_DISABLE=1); "
             "net_neuron: over the selected network plugin."},
    {.key = "transport.connect_timeout_ms",
     .env = kEnvConnectTimeout,
     .type = Type::Int,
     .default_text = "60000",
     .help = "Time limit in milliseconds for connecting every ring channel of a "
             "communicator after the connection blobs were exchanged.",
     .min = 1,
     .max = kMaxDurationMs},
    {.key = "health.enable",
     .env = kEnvHealth,
     .type = Type::Bool,
     .default_text = "true",
     .help = "Run the health service in every process (one thread, started with the first "
             "communicator): keep-alive links between processes, answers to nccom-ras, and "
             "the stall watchdog that names the peer a stalled rank waits on. false: none of "
             "it, and nothing watches the proxy for stalls (the runtime's execution timeout "
             "still bounds a collective)."},
    {.key = "health.client_address",
     .env = kEnvHealthAddr,
     .type = Type::String,
     .default_text = "127.0.0.1:28028",
     .help = "The host:port where nccom-ras (or NCCL's ncclras) reaches the job. Every process "
             "of a host listens on it (SO_REUSEPORT) and any of them answers for the whole "
             "job. Keep it on loopback unless the network is trusted: it answers anyone who "
             "connects. Give each job on a host its own port. Empty: no client port.",
     .flags = kJobIdentity},
    {.key = "health.keepalive_ms",
     .env = kEnvHealthKeepAlive,
     .type = Type::Int,
     .default_text = "1000",
     .help = "Period in milliseconds of the keep-alives each process sends on its health "
             "links (to two successors and two predecessors in the ring of processes).",
     .min = 10,
     .max = 60000},
    {.key = "health.timeout_factor",
     .env = kEnvHealthFactor,
     .type = Type::Int,
     .default_text = "5",
     .help = "A linked process silent for this many keep-alive periods is unresponsive "
             "(stopped, swapping, wedged or unreachable); one whose link closes without a "
             "goodbye is dead.",
     .min = 2,
     .max = 1000},
    {.key = "health.query_timeout_ms",
     .env = kEnvHealthQuery,
     .type = Type::Int,
     .default_text = "1000",
     .help = "How long a health query waits for each process's answer (nccom-ras's "
             "default, and the stall watchdog's probe of the peer it waits on); a process "
             "that has not answered by then is reported unresponsive.",
     .min = 10,
     .max = 600000},
    {.key = "health.stall_warn_s",
     .env = kEnvStallWarnS,
     .type = Type::Int,
     .default_text = "60",
     .help = "A proxy stream whose running execution makes no progress for this many "
             "seconds logs one WARN on that rank naming the peer it waits on, the channel, "
             "and what that peer's process is doing (alive and itself waiting, "
             "unresponsive, or dead). 0: never.",
     .min = 0,
     .max = kMaxDurationS},
    {.key = "health.stall_fail_s",
     .env = kEnvStallFailS,
     .type = Type::Int,
     .default_text = "1800",
     .help = "A stall this many seconds long fails the stream (NRT_TIMEOUT) with the "
             "stall warning's message, on every rank that waits. 0: never.",
     .min = 0,
     .max = kMaxDurationS},
};

}  // namespace

KnobTable host_knobs() { return kHostKnobs; }

}  // namespace nccom::config
