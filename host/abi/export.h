// Helpers shared by the files that define the 37 neuron* exports.
#pragma once

#include <nccom/nrt_abi.h>

// Every export is a plain, unversioned C function with default visibility;
// host/libnccom.map is what finally decides the dynamic symbol table.
#define NCCOM_API extern "C" __attribute__((visibility("default")))
