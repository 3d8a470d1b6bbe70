#include "transport/selection.h"

#include <nccom/topo/graph.h>
#include <nccom/topo/paths.h>

namespace nccom::transport {

Result<P2pPolicy> P2pPolicy::from_text(std::string_view disable, std::string_view level) {
  P2pPolicy p;
  const auto opt = [](std::string_view v) {
    return v.empty() ? std::nullopt : std::optional<std::string_view>(v);
  };
  auto resolved = topo::resolveP2pLevel(opt(disable), opt(level));
  if (!resolved) return resolved.take_error();
  // resolveP2pLevel folds DISABLE=1 into level LOC; keep "disabled" apart:
  // with it no pair uses P2P, not even two ranks of one device.
  auto disable_only = topo::resolveP2pLevel(opt(disable), std::nullopt);
  if (!disable_only) return disable_only.take_error();
  p.disabled = *disable_only == static_cast<int>(topo::PathType::LOC);
  p.level = *resolved;
  return p;
}

bool P2pPolicy::allows(const nccom_transport_peer_t& a, const nccom_transport_peer_t& b) const {
  if (disabled) return false;
  if (level == topo::PathSettings::kUnset) return true;
  const topo::PathType path = a.device == b.device ? topo::PathType::LOC : topo::PathType::NVL;
  return static_cast<int>(path) <= level;
}

Result<const TransportBackend*> select_transport(
    const std::vector<const TransportBackend*>& backends, const P2pPolicy& policy,
    const nccom_transport_comm_t& services, const nccom_transport_peer_t& me,
    const nccom_transport_peer_t& peer) {
  for (const TransportBackend* b : backends) {
    if (!b->has_proxy() && !policy.allows(me, peer)) continue;
    auto ok = b->can_connect(services, me, peer);
    if (!ok) return ok.take_error();
    if (*ok) return b;
  }
  return make_error(NRT_FAILURE, "No transport found between devices " + std::to_string(me.device) +
                                     " and " + std::to_string(peer.device) +
                                     ". Possible replica group misconfiguration (ranks " +
                                     std::to_string(me.rank) + " and " + std::to_string(peer.rank) +
                                     ")");
}

}  // namespace nccom::transport
