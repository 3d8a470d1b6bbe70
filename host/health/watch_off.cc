// watch.h in a build without the health service (-DNCCOM_HEALTH=OFF): no
// thread, no ports, nothing watched. The all-zero card tells the other
// ranks (which may run a service) that this process runs none.
#include "health/watch.h"
#include "log/log.h"

#include <mutex>

namespace nccom::health {

CardBytes own_card(const ServiceSettings& settings, const bootstrap::SocketAddress& /*host*/,
                   const std::string& /*host_label*/) {
  static std::once_flag said;
  if (settings.enabled) {
    std::call_once(said, [] {
      NCCOM_INFO(log::kInit,
                 "health: this libnccom was built without the health service "
                 "(-DNCCOM_HEALTH=OFF): health.* has no effect, nothing watches the proxy for "
                 "stalls, and nccom-ras finds no process of this job");
    });
  }
  return CardBytes{};
}

std::shared_ptr<RankWatch> watch(uint64_t /*comm_hash*/, int /*rank*/, int /*nranks*/) {
  return nullptr;
}

void record_error(uint64_t /*comm_hash*/, int /*rank*/, std::string /*text*/) {}

}  // namespace nccom::health
