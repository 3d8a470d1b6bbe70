// The host's only door to the runtime: the 20 callbacks libnccom imports from
// libnrt.so.1 @NRT_2.0.0. Every call into libnrt goes through
// runtime::api(), so a unit test can run host code against a scripted runtime
// (install_for_testing) without a libnrt at all.
#pragma once

#include <nccom/nrt_abi.h>

namespace nccom::runtime {

struct Api {
#define NCCOM_RUNTIME_SLOT(name) decltype(&::name) name;
  NCCOM_FOR_EACH_IMPORT(NCCOM_RUNTIME_SLOT)
#undef NCCOM_RUNTIME_SLOT
};

// The runtime in use: libnrt's callbacks unless a test installed others.
const Api& api();

// The table bound to the real libnrt imports.
const Api& libnrt();

// Replaces the runtime for this process (tests only); nullptr restores libnrt.
void install_for_testing(const Api* api);

}  // namespace nccom::runtime
