// Graph XML <-> TopoGraph (upstream ncclTopoGetGraphFromXml /
// ncclTopoGetChannelFromXml / GetXmlFromGraph):
//
//   <graphs version="1">
//     <graph id="0" pattern="4" crossnic="0" nchannels="2" speedintra="20"
//            speedinter="12" typeintra="NVL" typeinter="PIX" samechannels="1">
//       <channel><net dev="0"/><gpu dev="0"/>...<gpu dev="7"/><net dev="0"/></channel>
//       ...
//
// This is the bridge the NEW search and NCCL_GRAPH_FILE use: channels listed
// by GPU `dev`, translated to ranks through the system's GPU nodes.
#pragma once

#include <nccom/topo/graph.h>
#include <nccom/topo/system.h>
#include <nccom/topo/xml.h>
#include <nccom/util/result.h>

#include <vector>

namespace nccom::topo {

inline constexpr int kGraphXmlVersion = 1;  // NCCL_GRAPH_XML_VERSION

// Loads the <graph> of a <graphs> document that matches the request in
// `graph` (its id; a crossnic=1 graph is skipped when graph.crossNic == 0).
// On success fills the result fields, nLocal, intra and inter, and returns
// the number of channels loaded (0 when no graph matched: `graph` is then
// unchanged). On error `graph` is unchanged. Later matches replace earlier
// ones, as upstream.
Result<int> graphFromXml(const XmlDocument& doc, const TopoSystem& system, TopoGraph& graph);

// Writes graphs as a <graphs version="1"> document, one <graph> each.
// Channels name GPUs by dev (rank -> dev through the system); <net> entries
// are written only when the system has NET nodes.
Result<XmlDocument> graphsToXml(const std::vector<const TopoGraph*>& graphs,
                                const TopoSystem& system);
// Appends one <graph> under an existing <graphs> element.
Status appendGraphXml(XmlNode& graphs, const TopoGraph& graph, const TopoSystem& system);
// Appends channel c of `graph` as a <channel> under a <graph> element
// (upstream ncclTopoGetXmlFromChannel).
Status appendChannelXml(XmlNode& graphXml, const TopoGraph& graph, int c, const TopoSystem& system);

}  // namespace nccom::topo
