// nccom::config — what the configuration says about settings it will not
// use: variables of the environment that look like nccom's (NCCOM_*, CCOM_*,
// NEURON_CCOM_*) but that nothing reads (usually a misspelling, named with
// the closest known name), NCCL's own variables that nccom does not read,
// and [plugins.<name>] sections that name no plugin nccom can find.
//
// One implementation for libnccom (WARN and INFO lines once per process,
// host/core/environment_report.h) and nccom-config (notes in its listing,
// and --check's verdict on sections). Pure: the caller hands in the names
// set in the environment and the plugins it knows of.
#pragma once

#include "config/config.h"

#include <filesystem>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nccom::config {

struct EnvNote {
  std::string name;        // the variable as set
  std::string suggestion;  // the closest name nccom reads ("" when none is close)
  bool nccl = false;       // an NCCL variable nccom does not read (else: unknown)
};

// Whether nccom reads `name` outside the knob tables: the loader's own
// (NCCOM_CONFIG, NCCOM_CLUSTER), the tools' and the test harness's
// (NCCOM_TEST_*, NCCOM_RAS_*, NCCOM_FAIL_ALLOC_*, ...), the build scripts',
// and the runtime's (NEURON_RT_*).
bool read_outside_knobs(std::string_view name);

// The variables the configuration's knobs read: every knob registered in
// `config` (the host's) and every plugin bound against it so far
// (Config::plugin_claims).
std::set<std::string> knob_variables(const Config& config);

// The notes for `environ_names` (the names set, non-empty, in the
// environment), sorted by name: a name that looks like nccom's and is
// neither in `known`, nor read_outside_knobs, nor a variable of nccom's own
// plugins (shipped_plugin_variables), with its closest known name; an NCCL
// setting nccom does not read.
std::vector<EnvNote> environment_notes(const std::set<std::string>& known,
                                       const std::vector<std::string>& environ_names);

// "NCCOM_BOOTSTRAP_PROTOKOL is not a variable nccom reads; did you mean
// NCCOM_BOOTSTRAP_PROTOCOL?", "NCCL_ALGO is an NCCL setting nccom does not
// read".
std::string note_text(const EnvNote& note);

// The variables the knobs of nccom's own plugins read (socket, ofi,
// neuron): environment_notes knows them whether or not the plugin is loaded.
std::span<const std::string_view> shipped_plugin_variables();

// The names of an environ-style array whose value is not empty (an empty
// value counts as unset, as for every knob).
std::vector<std::string> environ_names(char** environ);

// The closest of `candidates` to `word` within an edit distance of 3, or a
// quarter of the word for long names; "" when none is that close.
std::string closest_name(const std::string& word, const std::vector<std::string>& candidates);

// The section names of nccom's own plugins: socket, ofi (libnccom-net.so),
// neuron (topo_neuron), nccl (topo_nccl), p2p, net_neuron.
std::span<const std::string_view> shipped_plugin_names();

// The names by which the plugin files in `dirs` are loaded: <name> of each
// libnccom-<name>.so, and of libnccom-net-<name>.so (net.plugin's lookup).
// Unreadable directories are skipped.
std::set<std::string> plugin_names_in(const std::vector<std::filesystem::path>& dirs);

// A [plugins.<name>] section (top level or in a cluster section) whose name
// is no plugin in `found`.
struct SectionNote {
  std::string plugin;      // "sockets"
  std::string section;     // as written: "plugins.sockets", "clusters.trn2.plugins.sockets"
  std::string where;       // its first setting: "/etc/nccom/nccom.toml:12"
  std::string suggestion;  // the closest plugin name in `found`, or ""
};

// One note per section of the file (in file order) that names a plugin not
// in `found` — the plugins the caller can name: bound, installed, shipped.
std::vector<SectionNote> plugin_section_notes(const Config& config,
                                              const std::set<std::string>& found);

// "[plugins.sockets] (/x.toml:3) names no plugin nccom can find, so its
// settings are not used; did you mean [plugins.socket]?"
std::string section_note_text(const SectionNote& note);

}  // namespace nccom::config
