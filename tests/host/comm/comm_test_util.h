// Runs a communicator of n ranks as n threads of this process: rank 0 makes
// the unique id (starting the root), every rank brings its communicator up
// with explicit settings, then runs a caller-supplied body.
#pragma once

#include "comm/communicator.h"

#include <gtest/gtest.h>

#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace nccom_test {

inline nccom::comm::BootstrapSettings loopback_settings(const std::string& protocol,
                                                        std::chrono::milliseconds timeout) {
  nccom::comm::BootstrapSettings s;
  s.socket_timeout = timeout;
  s.handshake_timeout = timeout;
  s.protocol = protocol;
  s.interface.name = "lo";
  s.interface.address = *nccom::bootstrap::SocketAddress::parse("127.0.0.1:1");
  s.interface.address.set_port(0);
  return s;
}

// Rank r of n sits on emulated host r * hosts / n (its virtual_server_id).
inline enc_neuron_device_info_t device_for(int rank, int nranks, int hosts) {
  enc_neuron_device_info_t dev{};
  const int per_host = (nranks + hosts - 1) / hosts;
  dev.nec_dev_id = rank % per_host;
  dev.mla_idx = rank % per_host;
  dev.host_device_id = rank % per_host;
  dev.virtual_server_id = static_cast<uint32_t>(rank / per_host);
  return dev;
}

struct RankOutcome {
  nccom::Status status;
  std::unique_ptr<nccom::comm::Communicator> comm;
};

// Brings up rank r of n (on emulated host device_for(r, nranks, hosts)) from
// the encoded unique id; blocks until its communicator is up or failed.
inline RankOutcome init_rank(const ncclUniqueId& bytes, int r, int nranks, int hosts,
                             const nccom::comm::BootstrapSettings& settings, bool global = false) {
  const enc_neuron_device_info_t dev = device_for(r, nranks, hosts);
  nccom::comm::InitRequest request;
  request.id = &bytes;
  request.nranks = nranks;
  request.rank = r;
  request.device = &dev;
  request.global = global;
  RankOutcome out;
  auto created = nccom::comm::Communicator::create(request, settings);
  if (created) {
    out.comm = std::move(created).value();
  } else {
    out.status = created.error();
  }
  return out;
}

// Brings up n ranks on threads; returns each rank's outcome.
inline std::vector<RankOutcome> bring_up(int nranks, int hosts,
                                         const nccom::comm::BootstrapSettings& settings,
                                         bool global = false) {
  auto id = nccom::comm::get_unique_id(nullptr, nranks, global, settings);
  std::vector<RankOutcome> outcomes(nranks);
  if (!id) {
    for (auto& o : outcomes) o.status = id.error();
    return outcomes;
  }
  const ncclUniqueId bytes = id->encode();
  std::vector<std::thread> threads;
  for (int r = 0; r < nranks; ++r) {
    threads.emplace_back(
        [&, r] { outcomes[r] = init_rank(bytes, r, nranks, hosts, settings, global); });
  }
  for (auto& t : threads) t.join();
  return outcomes;
}

// Runs `body(rank, comm)` on every rank's thread at once.
inline void on_every_rank(std::vector<RankOutcome>& ranks,
                          const std::function<void(int, nccom::comm::Communicator&)>& body) {
  std::vector<std::thread> threads;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    threads.emplace_back([&, r] { body(static_cast<int>(r), *ranks[r].comm); });
  }
  for (auto& t : threads) t.join();
}

}  // namespace nccom_test
