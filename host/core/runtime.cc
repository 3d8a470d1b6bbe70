#include "core/runtime.h"

#include <atomic>

namespace nccom::runtime {
namespace {

// Referencing all 20 here is what binds them @NRT_2.0.0 in libnccom's
// VERNEED, exactly as the original does, whichever of them are used yet.
constexpr Api kLibnrt = {
#define NCCOM_RUNTIME_BIND(name) &::name,
    NCCOM_FOR_EACH_IMPORT(NCCOM_RUNTIME_BIND)
#undef NCCOM_RUNTIME_BIND
};

std::atomic<const Api*> g_api{nullptr};

}  // namespace

const Api& libnrt() { return kLibnrt; }

const Api& api() {
  const Api* installed = g_api.load(std::memory_order_acquire);
  return installed != nullptr ? *installed : kLibnrt;
}

void install_for_testing(const Api* api) { g_api.store(api, std::memory_order_release); }

}  // namespace nccom::runtime
