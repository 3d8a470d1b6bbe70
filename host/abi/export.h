// Helpers shared by the files that define the 37 neuron* exports.
#pragma once

#include <nccom/nrt_abi.h>

// Every export is a plain, unversioned C function with default visibility;
// host/libnccom.map is what finally decides the dynamic symbol table.
#define NCCOM_API extern "C" __attribute__((visibility("default")))

namespace nccom::abi {

// The answer of an entry point that a later issue implements: logs once per
// entry point, as a WARN naming the issue, and returns `status` (never a fake
// success). See docs/decisions.md, "unimplemented entry points".
NRT_STATUS not_implemented(const char* export_name, int issue, NRT_STATUS status = NRT_FAILURE);

}  // namespace nccom::abi
