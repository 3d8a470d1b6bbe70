// nccom-topo's three views of one ToolResult: plain text for an operator,
// JSON with the same facts for scripts, Graphviz DOT for a picture.
#pragma once

#include "topo_tool.h"

#include <nccom/util/result.h>

#include <string>

namespace nccom::topotool {

// At most this many nodes are drawn in DOT; more are named in a label.
inline constexpr int kMaxDrawnNodes = 4;

std::string render_text(const ToolResult& r);
std::string render_json(const ToolResult& r);
std::string render_dot(const ToolResult& r);

// The topology XML of node `node` (NCCL dump layout) and its graph XML.
Result<std::string> system_xml_text(const ToolResult& r, int node);
Result<std::string> graph_xml_text(const ToolResult& r, int node);

// Helpers shared by the renderers.
std::string join(const std::vector<int>& v, const char* sep = " ");
const char* pod_name(int32_t pod_type);
// Node `node`'s ring order of channel c (global ranks).
std::vector<int> node_channel(const ToolResult& r, int node, int c);

}  // namespace nccom::topotool
