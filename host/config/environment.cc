#include "config/environment.h"

#include "config/value.h"

#include <algorithm>
#include <array>
#include <cstring>

namespace nccom::config {
namespace {

// Variables nccom reads outside the knob tables. The loader's own; the job
// registry nccom-ras reads; the build and lint scripts'; a test's repeat
// count; the SDK's hello example's knob (nccom-config lists it with or
// without the plugin).
constexpr std::array<std::string_view, 7> kReadElsewhere = {
    kConfigFileEnv,        kClusterEnv,      "NCCOM_CCACHE",
    "NCCOM_LINT_CACHE",    "NCCOM_STEP_LOG", "NCCOM_LIFECYCLE_REPETITIONS",
    "NCCOM_HELLO_GREETING"};
// Prefixes of families read outside the knob tables: nccom-test's launcher
// and its ranks, nccom-ras and the health service's client port, the test
// harness's allocation failures, the runtime (libnrt and the reference
// runtime).
constexpr std::array<std::string_view, 4> kReadElsewherePrefixes = {
    "NCCOM_TEST_", "NCCOM_RAS_", "NCCOM_FAIL_ALLOC_", "NEURON_RT_"};

// NCCL settings that users carry over and that nccom does not read: their
// effect is decided elsewhere here (the runtime, the topology plugins), or
// does not exist on Neuron.
constexpr std::array<std::string_view, 22> kNcclNotRead = {
    "NCCL_ALGO",           "NCCL_PROTO",        "NCCL_BUFFSIZE",       "NCCL_MAX_NCHANNELS",
    "NCCL_MIN_NCHANNELS",  "NCCL_NTHREADS",     "NCCL_SHM_DISABLE",    "NCCL_NET_GDR_LEVEL",
    "NCCL_NET_GDR_READ",   "NCCL_IB_HCA",       "NCCL_IB_DISABLE",     "NCCL_IB_TIMEOUT",
    "NCCL_IB_RETRY_CNT",   "NCCL_CROSS_NIC",    "NCCL_COLLNET_ENABLE", "NCCL_NVLS_ENABLE",
    "NCCL_LAUNCH_MODE",    "NCCL_CUMEM_ENABLE", "NCCL_MAX_CTAS",       "NCCL_MIN_CTAS",
    "NCCL_TREE_THRESHOLD", "NCCL_LL_THRESHOLD"};

// The section names of the plugins nccom ships (their descriptors' and
// nccomNetConfig's names).
constexpr std::array<std::string_view, 6> kShippedPlugins = {"nccl", "neuron", "net_neuron",
                                                             "ofi",  "p2p",    "socket"};

// The variables the knobs of nccom's own plugins read: known whether or not
// the plugin is loaded in this process (a job on the socket plugin still
// runs where NCCOM_OFI_RAILS is set for others).
// socket: NCCL_NSOCKS_PERTHREAD, NCCL_SOCKET_NTHREADS; ofi: NCCOM_OFI_*;
// neuron (topo_neuron): CCOM_DBG_DISABLE_VERIFY_TOPOLOGY,
// NCCOM_GRAPH_DEFAULT_NEW_ALGORITHM.
constexpr std::array<std::string_view, 8> kShippedPluginVariables = {
    "NCCL_NSOCKS_PERTHREAD",
    "NCCL_SOCKET_NTHREADS",
    "NCCOM_OFI_RAILS",
    "NCCOM_OFI_LIVENESS",
    "NCCOM_OFI_LIVENESS_CHECK_MS",
    "NCCOM_OFI_LIVENESS_GRACE_MS",
    "CCOM_DBG_DISABLE_VERIFY_TOPOLOGY",
    "NCCOM_GRAPH_DEFAULT_NEW_ALGORITHM"};

bool looks_like_ours(std::string_view name) {
  return name.starts_with("NCCOM_") || name.starts_with("CCOM_") ||
         name.starts_with("NEURON_CCOM_");
}

constexpr std::string_view kFilePrefix = "libnccom-";
constexpr std::string_view kFileSuffix = ".so";
constexpr std::string_view kNetPrefix = "net-";

// Plugin names are short: a third of the name may differ ("sockets" for
// "socket", "neurn" for "neuron"), so that "abc" is not taken for "p2p".
std::string closest_plugin(const std::string& name, const std::vector<std::string>& candidates) {
  return std::string(detail::closest(name, candidates, std::max<std::size_t>(1, name.size() / 3)));
}

}  // namespace

bool read_outside_knobs(std::string_view name) {
  if (std::find(kReadElsewhere.begin(), kReadElsewhere.end(), name) != kReadElsewhere.end())
    return true;
  return std::any_of(kReadElsewherePrefixes.begin(), kReadElsewherePrefixes.end(),
                     [&](std::string_view p) { return name.starts_with(p); });
}

std::set<std::string> knob_variables(const Config& config) {
  std::set<std::string> names;
  for (const Entry& e : config.entries())
    for (std::string_view env : e.knob->env) names.emplace(env);
  const PluginClaims claims = config.plugin_claims();
  names.insert(claims.variables.begin(), claims.variables.end());
  return names;
}

std::string closest_name(const std::string& word, const std::vector<std::string>& candidates) {
  return std::string(detail::closest(word, candidates, std::max<std::size_t>(3, word.size() / 4)));
}

std::vector<EnvNote> environment_notes(const std::set<std::string>& known,
                                       const std::vector<std::string>& environ_names) {
  std::set<std::string> all = known;
  for (std::string_view k : kReadElsewhere) all.emplace(k);
  for (std::string_view k : kShippedPluginVariables) all.emplace(k);
  const std::vector<std::string> candidates(all.begin(), all.end());
  std::vector<EnvNote> notes;
  for (const std::string& name : environ_names) {
    if (all.count(name) != 0 || read_outside_knobs(name)) continue;
    if (looks_like_ours(name)) {
      notes.push_back({name, closest_name(name, candidates), false});
    } else if (std::find(kNcclNotRead.begin(), kNcclNotRead.end(), name) != kNcclNotRead.end()) {
      notes.push_back({name, "", true});
    }
  }
  std::sort(notes.begin(), notes.end(),
            [](const EnvNote& a, const EnvNote& b) { return a.name < b.name; });
  notes.erase(std::unique(notes.begin(), notes.end(),
                          [](const EnvNote& a, const EnvNote& b) { return a.name == b.name; }),
              notes.end());
  return notes;
}

std::string note_text(const EnvNote& note) {
  if (note.nccl) return note.name + " is an NCCL setting nccom does not read";
  return note.name + " is not a variable nccom reads" +
         (note.suggestion.empty() ? std::string() : "; did you mean " + note.suggestion + "?");
}

std::vector<std::string> environ_names(char** environ) {
  std::vector<std::string> names;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq != nullptr && eq[1] != '\0') names.emplace_back(*e, static_cast<std::size_t>(eq - *e));
  }
  return names;
}

std::span<const std::string_view> shipped_plugin_names() { return kShippedPlugins; }

std::span<const std::string_view> shipped_plugin_variables() { return kShippedPluginVariables; }

std::set<std::string> plugin_names_in(const std::vector<std::filesystem::path>& dirs) {
  std::set<std::string> names;
  for (const std::filesystem::path& dir : dirs) {
    std::error_code ec;
    std::filesystem::directory_iterator it(dir, ec);
    for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
      const std::string file = it->path().filename().string();
      if (file.size() <= kFilePrefix.size() + kFileSuffix.size() ||
          !file.starts_with(kFilePrefix) || !file.ends_with(kFileSuffix))
        continue;
      std::string_view name(file);
      name.remove_prefix(kFilePrefix.size());
      name.remove_suffix(kFileSuffix.size());
      names.emplace(name);
      if (name.size() > kNetPrefix.size() && name.starts_with(kNetPrefix))
        names.emplace(name.substr(kNetPrefix.size()));
    }
  }
  return names;
}

std::vector<SectionNote> plugin_section_notes(const Config& config,
                                              const std::set<std::string>& found) {
  std::set<std::string> all = found;
  for (std::string_view name : kShippedPlugins) all.emplace(name);
  const std::vector<std::string> candidates(all.begin(), all.end());
  std::vector<SectionNote> notes;
  std::set<std::string> seen;  // sections as written
  for (const PluginSetting& s : config.plugin_settings()) {
    if (all.count(s.plugin) != 0) continue;
    // The section as written: the setting's name without its key.
    const std::string tail = "plugins." + s.plugin + "." + s.key;
    std::string section = "plugins." + s.plugin;
    if (s.shown.size() >= tail.size() && s.shown.ends_with(tail))
      section = s.shown.substr(0, s.shown.size() - s.key.size() - 1);
    if (!seen.insert(section).second) continue;
    notes.push_back(SectionNote{s.plugin, section,
                                s.source.file + ":" + std::to_string(s.source.line),
                                closest_plugin(s.plugin, candidates)});
  }
  return notes;
}

std::string section_note_text(const SectionNote& note) {
  std::string text = "[" + note.section + "] (" + note.where +
                     ") names no plugin nccom can find (" + detail::quote(note.plugin) +
                     " is not loaded, in the plugin directories or shipped with nccom), so its "
                     "settings are not used";
  if (!note.suggestion.empty()) {
    std::string fixed = note.section.substr(0, note.section.size() - note.plugin.size());
    text += "; did you mean [" + fixed + note.suggestion + "]?";
  }
  return text;
}

}  // namespace nccom::config
