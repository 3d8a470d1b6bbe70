// Where this node's <system> comes from (as in ncclTopoGetSystem): an
// operator's topology file (NCCL_TOPO_FILE / topology.file) or host detection
// serialised as NCCL topology XML (host_xml.h). Both end in the same check: the
// text parses, its root is <system>, it builds as a system graph, and every
// local rank is a <gpu rank>.
#pragma once

#include "local_share.h"

#include <nccom/topo/system.h>
#include <nccom/topo/xml.h>
#include <nccom/util/result.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace nccom::topo_nccl {

// Topology files larger than this are refused. The largest document the
// original's XML DOM holds (10,432 nodes at ~200 bytes) is about 2 MiB.
inline constexpr std::size_t kMaxTopologyFileBytes = 16u << 20;

// Parses `text` (named `source` in errors) and checks it as described above.
// Errors read "<source>:<line>:<col>: <rule>" (XML and structure errors come
// from sdk/topo with the same location).
Result<topo::TopoSystem> checkSystemXml(std::string_view text, const std::string& source,
                                        const LocalShare& share);

// The local ranks that have no <gpu rank> in `system`.
std::vector<int> missingRanks(const topo::TopoSystem& system, const LocalShare& share);

// The configured topology file, read (read_bounded_file: a regular file of at
// most kMaxTopologyFileBytes) and checked; returns its text as is.
Result<std::string> loadTopologyFile(const std::string& path, const LocalShare& share);

}  // namespace nccom::topo_nccl
