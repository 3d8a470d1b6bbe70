// Choosing the process's net plugin: the runtime's handle when it supplies one,
// else net.plugin, else the socket plugin — each choice logged once, with why.
//
// The logic (select_from) takes its candidates as values, so tests drive it
// without process singletons; process_candidates() builds the real list from
// the configuration and the runtime; select() runs it once per process.
#pragma once

#include "config/config.h"
#include "net/bind.h"

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace nccom::net {

// One plugin the selection may use.
struct Candidate {
  std::string what;  // for messages: "the runtime's libnccom-net.so", "net.plugin \"x\""
  std::string
      reason;  // logged when chosen: "runtime handle", "net.plugin from env NCCL_NET_PLUGIN"
  std::function<BindResult()> bind;
  // Optional, run after bind and before anything of the plugin runs in this
  // process (probe.h): an error rejects this candidate with that message.
  std::function<Status(const Net&)> probe;
  // Optional, run after bind and before init (configure_net): an error
  // rejects this candidate, which is then unloaded (its init never ran). An
  // NRT_INVALID error (the plugin's settings are invalid) ends the selection
  // with that error instead of trying the next candidate.
  std::function<Status(Net&)> prepare;
  // Appended to the WARN when this candidate fails its init and the next
  // one is tried: what an operator can do about it ("" for nothing).
  std::string if_it_fails;
  // Non-empty when a failed init (or no device) of this candidate is what
  // this host should see: that failure is then an INFO naming this reason
  // instead of a WARN (the runtime's EFA plugin on a host without EFA).
  std::string failure_expected;
};

struct Selection {
  std::unique_ptr<Net> net;  // initialised, with at least one device
  int devices = 0;
  std::string reason;
};

// Tries the candidates in order: bind, prepare, init(logger), devices(). The first
// that gets through with at least one device wins and is logged once at INFO
// (NET|INIT) with its reason. Each failure is one WARN naming the candidate
// and why (the bind error, or "OFI plugin initNet() failed is EFA enabled?"
// with init's or devices' answer); a failed init or devices() of a candidate
// with `failure_expected` is an INFO (NET|INIT) with that reason instead. A plugin whose init ran
// and that is then rejected is finalised but never unloaded (it may have started threads).
// NRT_FAILURE when no candidate is usable; NRT_INVALID, at once, when a
// candidate's settings are invalid.
Result<Selection> select_from(std::vector<Candidate> candidates, ncclDebugLogger_t logger);

// This process's candidates, in order:
//  (a) the runtime's handle (runtime::api().nrt_get_libnccl_net), unless
//      net.use_runtime_plugin is false; always the Neuron layout; borrowed,
//      never dlclose'd. A NULL handle with an error is logged at INFO as
//      "NET/Plugin: libnccom-net.so load returned %d" and skipped;
//  (b) net.plugin (a path or a bare name in `plugin_dirs`) with
//      net.plugin_layout, when set;
//  (c) the socket plugin (libnccom-net-socket.so in `plugin_dirs`), unless
//      (b) already names it.
// Every candidate's prepare is configure_net (net_config.h): a plugin that
// exports nccomNetConfig gets its knobs resolved and its configure called,
// whichever way that plugin was chosen.
std::vector<Candidate> process_candidates(const config::Config& config,
                                          const std::vector<std::filesystem::path>& plugin_dirs);

// Why the runtime's EFA plugin is expected not to start on this host, for
// Candidate::failure_expected; "" when EFA is present, so its failure is a
// WARN. `mode` is net.efa: "yes" (present), "no" (absent), "auto" (present
// when a device under `class_dir` is bound to the efa driver,
// nccom/util/efa.h). `source` says where net.efa was set.
std::string efa_absence(const std::string& mode, const std::string& source,
                        const std::string& class_dir);

// The FI_EFA_FORK_SAFE warning for kernel `release` (uname -r) when
// `fork_safe` (net.efa_fork_safe) is empty and the kernel is older than
// 5.14; "" when none is due or the release does not parse.
std::string fork_safe_warning(const std::string& release, const std::string& fork_safe);

// --- the process's net plugin ---

// Selected once per process under a mutex (kernel check, process_candidates,
// select_from, with plugin_logger()); the first outcome sticks. After
// finalize(), NRT_UNINITIALIZED: a finalised plugin is not selected again.
Result<Net*> select();

// Calls the selected plugin's fini exactly once. Later calls, and calls when
// nothing was selected, do nothing and succeed.
Status finalize();

// Keeps `net` alive (and its library loaded) for the rest of the process.
void retire(std::unique_ptr<Net> net);

}  // namespace nccom::net
