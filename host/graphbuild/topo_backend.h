// nccom::graphbuild::TopoBackend — the host's view of one topology plugin
// (sdk nccom/topo_plugin.h): its vtable checked once, then three calls that
// move XML text across the boundary and turn every failure into an Error
// naming the plugin, its file and the call.
#pragma once

#include "plugin/plugin_call.h"
#include "plugin/plugin_loader.h"

#include <nccom/topo_plugin.h>
#include <nccom/util/result.h>

#include <optional>
#include <string>
#include <vector>

namespace nccom::graphbuild {

// Largest text accepted from a plugin. The biggest legitimate topology (the
// original's 10,432-node XML limit at ~200 bytes a node) is about 2 MiB.
inline constexpr size_t kMaxPluginText = 64u << 20;

class TopoBackend {
 public:
  // Checks the vtable of an initialised topology plugin: struct_size covers
  // nccom_topo_ops_t, ops_version is one this host reads, and the mandatory
  // slots (probe, get_system_xml, free_text) are set.
  static Result<TopoBackend> bind(plugin::LoadedPlugin& plugin);

  const std::string& name() const { return plugin_->name(); }

  // Whether this backend describes `machine`; `why` says why not.
  bool probe(const nccom_topo_machine_t& machine, std::string* why) const;

  Result<std::string> system_xml(const nccom_topo_machine_t& machine,
                                 const nccom_topo_node_t& node) const;

  // The graph XML, or nullopt when the backend has no search for this
  // request (no compute_graph slot, or it answered UNSUPPORTED).
  // The ring order over nodes given each node's pod node id; index order
  // when the plugin has no order_nodes or answers UNSUPPORTED. The answer is
  // checked to be a permutation.
  Result<std::vector<int>> order_nodes(const nccom_topo_machine_t& machine,
                                       const std::vector<int>& pod_node_ids) const;

  // The backend's platform catalogue (list_platforms), or nullopt when it
  // names none (no slot, an older ops struct, or UNSUPPORTED).
  Result<std::optional<std::string>> platforms_xml() const;

  // The backend's model of `machine`'s node (describe_node), or nullopt
  // when it has none.
  Result<std::optional<std::string>> node_xml(const nccom_topo_machine_t& machine) const;

  Result<std::optional<std::string>> graph_xml(const nccom_topo_machine_t& machine,
                                               const nccom_topo_node_t& node,
                                               const std::string& system_xml,
                                               const nccom_topo_graph_request_t& request) const;

 private:
  TopoBackend(plugin::LoadedPlugin& plugin, const nccom_topo_ops_t& ops)
      : plugin_(&plugin), ops_(&ops) {}
  Result<std::string> take_text(char* text, const char* call) const;
  Error failure(const char* call, nccom_plugin_status_t status, const char* detail) const;

  plugin::LoadedPlugin* plugin_;
  const nccom_topo_ops_t* ops_;
  // An optional answer of text: nullopt for a NULL slot or UNSUPPORTED.
  Result<std::optional<std::string>> optional_text(nccom_plugin_status_t s, char* text,
                                                   const plugin::ErrorBuffer& buf,
                                                   const char* call) const;

  decltype(nccom_topo_ops_t::order_nodes) order_nodes_ = nullptr;
  decltype(nccom_topo_ops_t::list_platforms) list_platforms_ = nullptr;
  decltype(nccom_topo_ops_t::describe_node) describe_node_ = nullptr;
};

}  // namespace nccom::graphbuild
