// Fuzz target: the topology XML parser (sdk/topo/xml_parser.cc) and, for
// what it accepts, the <system> builder and the path computation. Inputs are
// any bytes; the parser must answer with a document or a located error.
//
// Invariants checked: every parse error starts with "<string>:"; a parsed
// document stays within the limits and writes back to text that parses to a
// document writing the same text (lossless, deterministic round trip); a
// built system stays within NCCL_TOPO_MAX_NODES per type; computed paths
// never have more hops than the graph has nodes.
//
// Not one of the bootstrap wire targets: its replay runs in tests/sdk/topo
// (TopoXml.FuzzTargetReplay), its libFuzzer build is the last block of
// tests/fuzz/CMakeLists.txt, its seeds are tests/fuzz/corpus/topo_xml/.
#include "fuzz_support.h"

#include <nccom/topo/paths.h>
#include <nccom/topo/system.h>
#include <nccom/topo/xml.h>

#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nccom::topo;
  using nccom::fuzz::require;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto doc = parseXml(text);
  if (!doc.ok()) {
    require(doc.error().message.rfind("<string>:", 0) == 0, "topo_xml",
            "parse error without a location");
    return 0;
  }
  require(doc->countNodes() <= XmlLimits{}.maxNodes, "topo_xml",
          "accepted more nodes than the limit");
  const std::string once = writeXml(*doc->root);
  auto again = parseXml(once);
  require(again.ok(), "topo_xml", "writer output does not parse");
  require(writeXml(*again->root) == once, "topo_xml",
          "read -> write -> read -> write changed the text");

  auto sys = buildSystem(*doc);
  if (!sys.ok()) return 0;
  int total = 0;
  for (const auto& set : sys->nodes) {
    require(set.size() <= static_cast<std::size_t>(kMaxNodesPerType), "topo_xml",
            "more nodes than NCCL_TOPO_MAX_NODES");
    total += static_cast<int>(set.size());
  }
  if (total > 96) return 0;  // keep each run fast; paths are O(nodes x links)
  if (!computePaths(*sys).ok()) return 0;
  for (const auto& set : sys->nodes) {
    for (const auto& node : set) {
      for (const auto& paths : node.paths) {
        for (const auto& p : paths)
          require(p.count() <= total, "topo_xml", "a path longer than the graph");
      }
    }
  }
  for (const auto& a : sys->of(NodeType::GPU)) {
    for (const auto& b : sys->of(NodeType::GPU)) {
      (void)checkP2p(*sys, a.gpu.rank, b.gpu.rank, PathSettings{});
    }
  }
  return 0;
}
