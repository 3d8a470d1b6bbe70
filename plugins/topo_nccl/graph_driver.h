// compute_graph's work between the XML texts: the host's <system> text ->
// the system the OLD search runs on -> the search -> NCCL graph XML.
#pragma once

#include "local_share.h"
#include "old_search.h"

#include <nccom/topo/system.h>
#include <nccom/util/result.h>

#include <string>
#include <string_view>

namespace nccom::topo_nccl {

// Parses and checks the system text (system_source.h rules), drops GPUs
// whose rank is not local (upstream's trim keeps only this communicator's
// devices), drops every NET when the communicator lives on this node alone
// (nNodes == 1 or every rank is local: nothing leaves the node), and
// computes the paths.
Result<topo::TopoSystem> prepareSearchSystem(std::string_view systemXml, const LocalShare& share);

// The whole compute_graph: prepare, search, write <graphs version="1">.
Result<std::string> computeGraphXml(std::string_view systemXml, const LocalShare& share,
                                    const SearchRequest& request,
                                    const SearchBudgets& budgets = {});

}  // namespace nccom::topo_nccl
