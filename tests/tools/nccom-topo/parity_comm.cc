// topo_parity_comm — one communicator of NODES x RANKS_PER_NODE ranks, every
// rank a thread of this process with its own Communicator (the real
// bootstrap over loopback), each building its graph with
// graphbuild::build_comm_graph: the code neuronBuildGraphComm runs before
// the transports, with this process's context (the configuration libnccom
// reads: NCCOM_CONFIG, NCCOM_CLUSTER, the environment), the topology plugins
// it loads, and the machine the reference runtime reports
// (NEURON_RT_EMU_PLATFORM, NEURON_RT_EMU_DEVICES, NEURON_RT_VIRTUAL_CORE_SIZE).
//
//   topo_parity_comm NODES RANKS_PER_NODE VCORES_PER_DEVICE POD_TYPE REPORT_RANKS
//
// Ranks are numbered node-major; local rank i sits on device
// i / VCORES_PER_DEVICE, logical core i % VCORES_PER_DEVICE (what a runtime
// that fills devices in order hands neuronInitComm). POD_TYPE is the device
// info's nec_pod_type_t (0 none, 1 P2P, 2 SWITCH); in a pod, node n is pod
// node n. REPORT_RANKS is a comma-separated list of ranks.
//
// Prints key=value lines: per reported rank R, r<R>.channels, and per
// channel c: r<R>.ring<c> (userRanks from R), r<R>.nic<c> (the NIC the
// transports are handed for that channel), r<R>.dup<c>; then agree=1 when
// every rank's rings are the same cycles as rank 0's; then ok=1. On a
// failure: error=... (naming the rank) and exit 1.
#include "comm/communicator.h"
#include "comm/settings.h"
#include "core/context.h"
#include "graphbuild/comm_graph.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

[[noreturn]] void die(const std::string& what) {
  std::printf("error=%s\n", what.c_str());
  std::fflush(stdout);
  std::exit(1);
}

int to_int(const char* text, const char* what) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < 0 || v > 100000)
    die(std::string(what) + " must be a non-negative integer, not \"" + text + "\"");
  return static_cast<int>(v);
}

std::string joined(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

// A ring as its successor map: the same cycle gives the same map from any rank.
std::vector<int> successors(const std::vector<int>& ring, int n) {
  std::vector<int> next(static_cast<size_t>(n), -1);
  for (size_t i = 0; i < ring.size(); ++i) {
    if (ring[i] < 0 || ring[i] >= n) return {};
    next[static_cast<size_t>(ring[i])] = ring[(i + 1) % ring.size()];
  }
  return next;
}

struct RankResult {
  std::string error;
  nccom::rings::GraphSummary summary;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6)
    die("usage: topo_parity_comm NODES RANKS_PER_NODE VCORES_PER_DEVICE POD_TYPE REPORT_RANKS");
  const int nodes = to_int(argv[1], "NODES");
  const int per_node = to_int(argv[2], "RANKS_PER_NODE");
  const int vcores = to_int(argv[3], "VCORES_PER_DEVICE");
  const int pod_type = to_int(argv[4], "POD_TYPE");
  if (nodes < 1 || per_node < 1 || vcores < 1)
    die("NODES, RANKS_PER_NODE and VCORES_PER_DEVICE must be positive");
  const int nranks = nodes * per_node;
  std::vector<int> report;
  {
    std::stringstream list(argv[5]);
    for (std::string r; std::getline(list, r, ',');) {
      const int rank = to_int(r.c_str(), "a rank of REPORT_RANKS");
      if (rank >= nranks)
        die("rank " + r + " of REPORT_RANKS is outside the " + std::to_string(nranks) + " ranks");
      report.push_back(rank);
    }
  }

  // The process's context, as the first libnccom entry point builds it.
  auto ctx = nccom::core::Context::get();
  if (!ctx) die("configuration: " + ctx.error().message);
  auto settings = nccom::comm::bootstrap_settings();
  if (!settings) die("bootstrap settings: " + settings.error().message);
  auto id = nccom::comm::get_unique_id(nullptr, nranks, /*global=*/false, **settings);
  if (!id) die("get_unique_id: " + id.error().message);
  const ncclUniqueId bytes = id->encode();

  std::vector<RankResult> results(static_cast<size_t>(nranks));
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(nranks));
  for (int r = 0; r < nranks; ++r) {
    threads.emplace_back([&, r] {
      const int node = r / per_node;
      const int local = r % per_node;
      enc_neuron_device_info_t dev{};
      dev.nec_dev_id = local / vcores;
      dev.mla_idx = dev.nec_dev_id;
      dev.host_device_id = dev.nec_dev_id;
      dev.routing_id = dev.nec_dev_id;
      dev.tpb_idx = local % vcores;
      dev.virtual_server_id = static_cast<uint32_t>(node);
      if (pod_type != 0) {
        dev.pod_type = static_cast<uint32_t>(pod_type);
        dev.pod_id = 0;
        dev.pod_node_id = static_cast<uint32_t>(node);
      }
      nccom::comm::InitRequest request;
      request.id = &bytes;
      request.nranks = nranks;
      request.rank = r;
      request.device = &dev;
      RankResult& out = results[static_cast<size_t>(r)];
      auto comm = nccom::comm::Communicator::create(request, **settings);
      if (!comm) {
        out.error = "init: " + comm.error().message;
        return;
      }
      // What neuronBuildGraphComm runs before the transports; the net
      // plugin's description only has to be the same on every rank.
      auto built = nccom::graphbuild::build_comm_graph(**comm, "");
      if (!built) {
        out.error = "build_comm_graph: " + built.error().message;
        return;
      }
      out.summary = std::move(*built);
      // Nobody leaves (closing its bootstrap sockets) before everyone is done.
      std::vector<int> fence(static_cast<size_t>(nranks), 0);
      if (auto s = (*comm)->all_gather(fence.data(), sizeof(int)); !s)
        out.error = "fence: " + s.error().message;
    });
  }
  for (std::thread& t : threads) t.join();
  for (int r = 0; r < nranks; ++r) {
    if (!results[static_cast<size_t>(r)].error.empty())
      die("rank " + std::to_string(r) + ": " + results[static_cast<size_t>(r)].error);
  }

  for (int r : report) {
    const nccom::rings::GraphSummary& s = results[static_cast<size_t>(r)].summary;
    std::printf("r%d.channels=%d\n", r, s.rings.nChannels);
    for (int c = 0; c < s.rings.nChannels; ++c) {
      const auto& ch = s.rings.channels[static_cast<size_t>(c)];
      const int nic =
          static_cast<size_t>(c) < s.channelNic.size() ? s.channelNic[static_cast<size_t>(c)] : -1;
      std::printf("r%d.ring%d=%s\nr%d.nic%d=%d\nr%d.dup%d=%d\n", r, c, joined(ch.userRanks).c_str(),
                  r, c, nic, r, c, ch.duplicate ? 1 : 0);
    }
  }
  // Every rank must see the same cycles as rank 0.
  const nccom::rings::GraphSummary& first = results[0].summary;
  for (int r = 1; r < nranks; ++r) {
    const nccom::rings::GraphSummary& s = results[static_cast<size_t>(r)].summary;
    if (s.rings.nChannels != first.rings.nChannels)
      die("rank " + std::to_string(r) + " has " + std::to_string(s.rings.nChannels) +
          " channels, rank 0 " + std::to_string(first.rings.nChannels));
    for (int c = 0; c < s.rings.nChannels; ++c) {
      if (successors(s.rings.channels[static_cast<size_t>(c)].userRanks, nranks) !=
          successors(first.rings.channels[static_cast<size_t>(c)].userRanks, nranks))
        die("rank " + std::to_string(r) + " channel " + std::to_string(c) +
            " is another ring than rank 0's");
    }
  }
  std::printf("agree=1\nok=1\n");
  std::fflush(stdout);
  return 0;
}
