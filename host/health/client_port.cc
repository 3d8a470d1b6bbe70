#include "health/client_port.h"

#include "health/engine.h"
#include "health/job_registry.h"
#include "health/port_share.h"
#include "log/log.h"

#include <unistd.h>

#include <algorithm>
#include <set>

namespace nccom::health::engine {
namespace {

// "pids 4242, 4243" (the first 8), for the messages.
std::string pid_words(const std::vector<int>& pids, bool unseen) {
  std::string out;
  for (std::size_t i = 0; i < pids.size() && i < 8; ++i) {
    out += (i == 0 ? (pids.size() == 1 ? "pid " : "pids ") : ", ") + std::to_string(pids[i]);
  }
  if (pids.size() > 8) out += ", ...";
  if (unseen)
    out += pids.empty() ? "processes this one cannot see" : ", and processes this one cannot see";
  return out;
}

// One process per host says it at WARN (the one that started first), the
// others at INFO.
void say(bool speaker, const std::string& text) {
  if (speaker) {
    NCCOM_WARN("%s", text.c_str());
  } else {
    NCCOM_INFO(log::kInit, "%s", text.c_str());
  }
}

}  // namespace

ClientPort::ClientPort(std::string configured, bootstrap::Socket listener)
    : configured_(std::move(configured)), listener_(std::move(listener)) {
  if (listener_.valid()) port_ = listener_.local_address().port();
}

void ClientPort::settle(const Card& own, const std::vector<const Card*>& cards) {
  if (!listener_.valid()) return;
  // This job's processes: their client sockets as their cards give them,
  // and those on this machine (same peer address, or loopback) by pid.
  std::set<uint32_t> ours = {socket_inode(listener_.fd())};
  std::vector<int> local = {static_cast<int>(getpid())};
  for (const Card* card : cards) {
    if (card->client_inode != 0) ours.insert(card->client_inode);
    const bool here =
        card->endpoint.is_loopback() || card->endpoint.host_string() == own.endpoint.host_string();
    if (here && card->pid != 0) local.push_back(static_cast<int>(card->pid));
  }
  std::vector<uint32_t> others;
  for (uint32_t inode : listeners_on(port_)) {
    if (ours.count(inode) == 0) others.push_back(inode);
  }
  if (others.empty()) return;
  // A socket our own processes opened since their cards went out (a job
  // that moved) is ours too; what remains is another job's.
  for (const auto& [inode, pid] : inode_holders(others, local)) {
    others.erase(std::remove(others.begin(), others.end(), inode), others.end());
  }
  if (others.empty()) return;
  std::vector<int> their_pids;
  const auto holders = inode_holders(others, {});
  for (const auto& [inode, pid] : holders) {
    if (std::find(their_pids.begin(), their_pids.end(), pid) == their_pids.end())
      their_pids.push_back(pid);
  }
  std::sort(their_pids.begin(), their_pids.end());
  const bool unseen = holders.size() < others.size();
  // Holders this process cannot see are taken as the older job.
  const Seniority theirs = unseen ? Seniority{} : seniority(their_pids);
  const std::string who = pid_words(their_pids, unseen);
  if (seniority(local) < theirs) {
    NCCOM_INFO(log::kInit,
               "health: nccom-ras port %u is also served by another job on this host (%s), "
               "which started later and moves off it",
               static_cast<unsigned>(port_), who.c_str());
    return;
  }
  move(local, who);
}

void ClientPort::move(const std::vector<int>& local, const std::string& others) {
  auto configured = SocketAddress::parse(configured_);
  if (!configured) return;
  const uint16_t from = port_;
  listener_.close();
  port_ = 0;
  const bool speaker = *std::min_element(local.begin(), local.end()) == getpid();
  const int first = configured->port();
  for (int port = first + 1; port < first + kClientPortSpan && port <= 65535; ++port) {
    const auto on_port = listeners_on(static_cast<uint16_t>(port));
    if (inode_holders(on_port, local).size() != on_port.size()) continue;  // another job's
    SocketAddress to = *configured;
    to.set_port(static_cast<uint16_t>(port));
    auto sock = listen_shared(to);
    if (!sock) continue;
    listener_ = std::move(*sock);
    port_ = static_cast<uint16_t>(port);
    (void)registry::publish(to.to_string());
    say(speaker, "health: nccom-ras port " + std::to_string(from) +
                     " on this host is served by another job (" + others +
                     "), which started first; this job's nccom-ras port here is " + to.to_string() +
                     " (nccom-ras -p " + std::to_string(port) +
                     "). Give each job on a host its own health.client_address "
                     "(NCCOM_RAS_ADDR) to choose it");
    return;
  }
  registry::withdraw();
  const int last = std::min(first + kClientPortSpan - 1, 65535);
  say(speaker, "health: nccom-ras port " + std::to_string(from) +
                   " on this host is served by another job (" + others + "), and ports " +
                   std::to_string(first + 1) + "-" + std::to_string(last) +
                   " are taken too: this job answers no nccom-ras on this host. Give each job "
                   "on a host its own health.client_address (NCCOM_RAS_ADDR)");
}

}  // namespace nccom::health::engine
