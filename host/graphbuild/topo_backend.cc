#include "graphbuild/topo_backend.h"

#include "plugin/plugin_call.h"

#include <array>
#include <cstddef>
#include <cstring>

namespace nccom::graphbuild {
namespace {

// The first version of nccom_topo_ops_t ended with free_text.
constexpr size_t kMinTopoOpsSize = offsetof(nccom_topo_ops_t, free_text) + sizeof(void*);

using plugin::ErrorBuffer;
using plugin::status_name;
std::string terminated(const ErrorBuffer& buf) { return plugin::error_text(buf); }

}  // namespace

Result<TopoBackend> TopoBackend::bind(plugin::LoadedPlugin& plugin) {
  const std::string who = "topology plugin " + plugin.name() + " (" + plugin.path().string() + ")";
  if (plugin.kind() != NCCOM_PLUGIN_KIND_TOPOLOGY) {
    return make_error(NRT_INVALID, who + " is not a topology plugin");
  }
  const nccom_plugin_ops_t& head = plugin.ops();
  // Slots appended after free_text are read only when struct_size covers
  // them (plugin.h's size-first rule).
  if (head.struct_size < kMinTopoOpsSize) {
    return make_error(NRT_INVALID, who + ": ops struct_size " + std::to_string(head.struct_size) +
                                       " is smaller than nccom_topo_ops_t (" +
                                       std::to_string(kMinTopoOpsSize) +
                                       "); rebuild it against this SDK");
  }
  const auto& ops = reinterpret_cast<const nccom_topo_ops_t&>(head);
  if (ops.ops_version != NCCOM_TOPO_OPS_VERSION) {
    return make_error(NRT_INVALID, who + ": topology ops version " +
                                       std::to_string(ops.ops_version) + ", this host reads " +
                                       std::to_string(NCCOM_TOPO_OPS_VERSION));
  }
  const char* missing = ops.probe == nullptr            ? "probe"
                        : ops.get_system_xml == nullptr ? "get_system_xml"
                        : ops.free_text == nullptr      ? "free_text"
                                                        : nullptr;
  if (missing != nullptr) {
    return make_error(NRT_INVALID, who + ": mandatory slot " + missing + " is NULL");
  }
  TopoBackend backend(plugin, ops);
  if (head.struct_size >= offsetof(nccom_topo_ops_t, order_nodes) + sizeof(void*)) {
    backend.order_nodes_ = ops.order_nodes;
  }
  if (head.struct_size >= offsetof(nccom_topo_ops_t, describe_node) + sizeof(void*)) {
    backend.list_platforms_ = ops.list_platforms;
    backend.describe_node_ = ops.describe_node;
  }
  return backend;
}

Error TopoBackend::failure(const char* call, nccom_plugin_status_t status,
                           const char* detail) const {
  return plugin::call_failure(*plugin_, "topology", call, status, detail != nullptr ? detail : "");
}

Result<std::string> TopoBackend::take_text(char* text, const char* call) const {
  if (text == nullptr) return failure(call, NCCOM_PLUGIN_ERROR, "it returned OK but no text");
  const size_t n = strnlen(text, kMaxPluginText + 1);
  std::string out(text, n > kMaxPluginText ? 0 : n);
  ops_->free_text(plugin_->context(), text);
  if (n > kMaxPluginText) {
    return failure(call, NCCOM_PLUGIN_ERROR, "its text exceeds the 64 MiB limit");
  }
  return out;
}

bool TopoBackend::probe(const nccom_topo_machine_t& machine, std::string* why) const {
  ErrorBuffer buf{};
  const nccom_plugin_status_t s = ops_->probe(plugin_->context(), &machine, buf.data(), buf.size());
  if (s == NCCOM_PLUGIN_OK) return true;
  if (why != nullptr) {
    *why = terminated(buf);
    if (why->empty()) *why = std::string("probe returned ") + status_name(s);
  }
  return false;
}

Result<std::string> TopoBackend::system_xml(const nccom_topo_machine_t& machine,
                                            const nccom_topo_node_t& node) const {
  ErrorBuffer buf{};
  char* text = nullptr;
  const nccom_plugin_status_t s =
      ops_->get_system_xml(plugin_->context(), &machine, &node, &text, buf.data(), buf.size());
  if (s != NCCOM_PLUGIN_OK) {
    if (text != nullptr) ops_->free_text(plugin_->context(), text);
    return failure("get_system_xml", s, terminated(buf).c_str());
  }
  return take_text(text, "get_system_xml");
}

Result<std::optional<std::string>> TopoBackend::optional_text(nccom_plugin_status_t s, char* text,
                                                              const ErrorBuffer& buf,
                                                              const char* call) const {
  if (s != NCCOM_PLUGIN_OK) {
    if (text != nullptr) ops_->free_text(plugin_->context(), text);
    if (s == NCCOM_PLUGIN_UNSUPPORTED) return std::optional<std::string>{};
    return failure(call, s, terminated(buf).c_str());
  }
  auto out = take_text(text, call);
  if (!out) return out.take_error();
  return std::optional<std::string>(std::move(*out));
}

Result<std::optional<std::string>> TopoBackend::platforms_xml() const {
  if (list_platforms_ == nullptr) return std::optional<std::string>{};
  ErrorBuffer buf{};
  char* text = nullptr;
  const nccom_plugin_status_t s =
      list_platforms_(plugin_->context(), &text, buf.data(), buf.size());
  return optional_text(s, text, buf, "list_platforms");
}

Result<std::optional<std::string>> TopoBackend::node_xml(
    const nccom_topo_machine_t& machine) const {
  if (describe_node_ == nullptr) return std::optional<std::string>{};
  ErrorBuffer buf{};
  char* text = nullptr;
  const nccom_plugin_status_t s =
      describe_node_(plugin_->context(), &machine, &text, buf.data(), buf.size());
  return optional_text(s, text, buf, "describe_node");
}

Result<std::optional<std::string>> TopoBackend::graph_xml(
    const nccom_topo_machine_t& machine, const nccom_topo_node_t& node,
    const std::string& system_xml, const nccom_topo_graph_request_t& request) const {
  if (ops_->compute_graph == nullptr) return std::optional<std::string>{};
  ErrorBuffer buf{};
  char* text = nullptr;
  const nccom_plugin_status_t s =
      ops_->compute_graph(plugin_->context(), &machine, &node, system_xml.c_str(), &request, &text,
                          buf.data(), buf.size());
  if (s == NCCOM_PLUGIN_UNSUPPORTED) {
    if (text != nullptr) ops_->free_text(plugin_->context(), text);
    return std::optional<std::string>{};
  }
  if (s != NCCOM_PLUGIN_OK) {
    if (text != nullptr) ops_->free_text(plugin_->context(), text);
    return failure("compute_graph", s, terminated(buf).c_str());
  }
  auto out = take_text(text, "compute_graph");
  if (!out) return out.take_error();
  return std::optional<std::string>(std::move(*out));
}

}  // namespace nccom::graphbuild

namespace nccom::graphbuild {

Result<std::vector<int>> TopoBackend::order_nodes(const nccom_topo_machine_t& machine,
                                                  const std::vector<int>& pod_node_ids) const {
  const int n = static_cast<int>(pod_node_ids.size());
  std::vector<int> identity(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) identity[i] = i;
  if (order_nodes_ == nullptr || n <= 1) return identity;
  std::vector<int32_t> ids(pod_node_ids.begin(), pod_node_ids.end());
  std::vector<int32_t> order(static_cast<size_t>(n), -1);
  ErrorBuffer buf{};
  const nccom_plugin_status_t s = order_nodes_(plugin_->context(), &machine, n, ids.data(),
                                               order.data(), buf.data(), buf.size());
  if (s == NCCOM_PLUGIN_UNSUPPORTED) return identity;
  if (s != NCCOM_PLUGIN_OK) return failure("order_nodes", s, terminated(buf).c_str());
  std::vector<bool> seen(static_cast<size_t>(n), false);
  for (int i = 0; i < n; ++i) {
    if (order[i] < 0 || order[i] >= n || seen[order[i]]) {
      return failure(
          "order_nodes", NCCOM_PLUGIN_ERROR,
          ("its answer is not a permutation of the " + std::to_string(n) + " nodes (entry " +
           std::to_string(i) + " is " + std::to_string(order[i]) + ")")
              .c_str());
    }
    seen[order[i]] = true;
  }
  return std::vector<int>(order.begin(), order.end());
}

}  // namespace nccom::graphbuild
