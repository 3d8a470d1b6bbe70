// graph_rank_driver — one rank of a communicator as its own process, through
// the real libnccom exports loaded by the reference runtime: init, then
// neuronBuildGraphComm (topology plugins, rings, transports), then
// neuronGetCommInfo and the ring connectors, then optionally
// neuronExpandConnectivity and the mesh connectors.
//
//   graph_rank_driver NRANKS RANK HOST LOCAL_INDEX (--make-id | --id HEX)
//                     [--expand mesh|rdh|default|N]... [--free-first]
//
// The rank's device is LOCAL_INDEX (one rank per device, as many devices as
// ranks on its host: NEURON_RT_EMU_DEVICES). Prints "id=<hex>" first (with
// --make-id), then key=value lines: channel_n, ring<c>=r0,r1,... (userRanks
// from this rank), prev<c>, next<c>, dup<c>, send<c>/recv<c> = "net" or
// "direct" (the ring connector is non-NULL or NULL), mla_cycle_n; per
// --expand i: expand<i>=<status>; after the last successful expand, for
// every rank p: mesh_send<p>/mesh_recv<p> = net, direct or err<status>, and
// mesh_reg<p> = ok or err<status> (a host buffer registered on the send
// connector and deregistered); then ok=1. On failure error=... and exit 1.
//
// --free-first: free the communicator at once after neuronGetCommInfo (no
// fence, no connectors, nothing else), as a runtime may: a rank that is done
// with its part of setup leaves while the others may still be building.
// --die-after-init: the process kills itself (SIGKILL) right after
// neuronInitComm returns, while the others build the graph (a crash during
// setup; a test may then start a new process as the same rank).
#include <nrt_emu.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace {

[[noreturn]] void die(const std::string& what) {
  std::printf("error=%s\n", what.c_str());
  std::fflush(stdout);
  std::exit(1);
}

void check(NRT_STATUS status, const char* what) {
  if (status != NRT_SUCCESS) die(std::string(what) + " returned " + std::to_string(status));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) die("usage: graph_rank_driver NRANKS RANK HOST LOCAL_INDEX (--make-id | --id HEX)");
  const int nranks = std::atoi(argv[1]);
  const int rank = std::atoi(argv[2]);
  const int host = std::atoi(argv[3]);
  const int local = std::atoi(argv[4]);
  const std::string mode = argv[5];
  if (nrt_emu_load_nccom() != NRT_SUCCESS) die(std::string("load: ") + nrt_emu_last_error());
  const nccom_export_table_t* t = nrt_emu_nccom_table();

  enc_neuron_device_info_t dev{};
  dev.nec_dev_id = local;
  dev.mla_idx = local;
  dev.host_device_id = local;
  dev.virtual_server_id = static_cast<uint32_t>(host);

  void* comm = nullptr;
  char id[NCCL_UNIQUE_ID_BYTES];
  int first_option = argc;
  std::set<void*> connectors;  // every non-NULL connector must be distinct
  if (mode == "--make-id") {
    check(t->neuronGetUniqueId(id, nranks, "graph"), "neuronGetUniqueId");
    static const char* digits = "0123456789abcdef";
    std::string hex;
    for (char c : id) {
      hex += digits[(c >> 4) & 15];
      hex += digits[c & 15];
    }
    std::printf("id=%s\n", hex.c_str());
    std::fflush(stdout);
    first_option = 6;
  } else if (mode == "--id" && argc > 6) {
    first_option = 7;
    const std::string hex = argv[6];
    if (hex.size() != 2 * NCCL_UNIQUE_ID_BYTES) die("the id must be 128 bytes in hex");
    for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; ++i)
      id[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  } else {
    die("unknown mode " + mode);
  }
  bool free_first = false;
  bool die_after_init = false;
  for (int i = first_option; i < argc; ++i) {
    free_first = free_first || std::strcmp(argv[i], "--free-first") == 0;
    die_after_init = die_after_init || std::strcmp(argv[i], "--die-after-init") == 0;
  }
  check(t->neuronInitComm(&comm, nranks, id, rank, &dev, false), "neuronInitComm");
  if (die_after_init) raise(SIGKILL);
  check(t->neuronBuildGraphComm(comm), "neuronBuildGraphComm");

  nccl_comm_info_t info{};
  check(t->neuronGetCommInfo(comm, &info), "neuronGetCommInfo");
  if (free_first) {
    check(t->neuronFreeComm(comm), "neuronFreeComm");
    std::printf("channel_n=%d\nok=1\n", info.channel_n);
    return 0;
  }
  std::printf("channel_n=%d\nmla_cycle_n=%d\nkangaring_channel_n=%d\n", info.channel_n,
              info.mla_cycle_n, info.kangaring_channel_n);
  for (int c = 0; c < info.channel_n; ++c) {
    std::string ring;
    for (int i = 0; i < nranks; ++i)
      ring += (i ? "," : "") + std::to_string(info.rings[c].user_ranks[i]);
    std::printf("ring%d=%s\nprev%d=%d\nnext%d=%d\ndup%d=%d\n", c, ring.c_str(), c,
                info.rings[c].prev, c, info.rings[c].next, c, info.rings[c].duplicate ? 1 : 0);
    if (nranks > 1) {
      void* send = reinterpret_cast<void*>(1);
      void* recv = reinterpret_cast<void*>(1);
      check(t->neuronGetNetConnector(comm, ENC_PATTERN_RING, c, true, &send),
            "neuronGetNetConnector(send)");
      check(t->neuronGetNetConnector(comm, ENC_PATTERN_RING, c, false, &recv),
            "neuronGetNetConnector(recv)");
      if (send != nullptr && send == recv)
        die("a channel's send and receive connectors are the same");
      if (send != nullptr && !connectors.insert(send).second)
        die("a send connector serves two channels");
      if (recv != nullptr && !connectors.insert(recv).second)
        die("a receive connector serves two channels");
      std::printf("send%d=%s\nrecv%d=%s\n", c, send ? "net" : "direct", c, recv ? "net" : "direct");
    }
  }
  bool expanded = false;
  for (int i = first_option, k = 0; i + 1 < argc; i += 2, ++k) {
    if (std::strcmp(argv[i], "--expand") != 0) die(std::string("unknown option ") + argv[i]);
    const std::string m = argv[i + 1];
    const int conn = m == "mesh"      ? ENC_CONNECTIVITY_MESH
                     : m == "rdh"     ? ENC_CONNECTIVITY_RDH
                     : m == "default" ? ENC_CONNECTIVITY_DEFAULT
                                      : std::atoi(m.c_str());
    const NRT_STATUS st = t->neuronExpandConnectivity(comm, static_cast<uint32_t>(conn));
    std::printf("expand%d=%d\n", k, static_cast<int>(st));
    expanded = expanded || st == NRT_SUCCESS;
  }
  if (expanded) {
    static char buffer[4096];
    for (int p = 0; p < nranks; ++p) {
      for (const bool is_send : {true, false}) {
        void* conn = reinterpret_cast<void*>(1);
        const NRT_STATUS st = t->neuronGetNetConnector(comm, ENC_PATTERN_MESH, p, is_send, &conn);
        std::string what = st != NRT_SUCCESS ? "err" + std::to_string(st) : conn ? "net" : "direct";
        if (st == NRT_SUCCESS && conn != nullptr && !connectors.insert(conn).second) {
          die("mesh connector of rank " + std::to_string(p) + " is also another connector");
        }
        std::printf("mesh_%s%d=%s\n", is_send ? "send" : "recv", p, what.c_str());
      }
      void* mh = nullptr;
      NRT_STATUS st = t->neuronNetRegMr(comm, ENC_PATTERN_MESH, p, true, NET_SEND_COMM, buffer,
                                        sizeof buffer, NCCL_PTR_HOST, &mh);
      if (st == NRT_SUCCESS) {
        st = t->neuronNetDeregMr(comm, ENC_PATTERN_MESH, p, true, NET_SEND_COMM, mh);
      }
      std::printf("mesh_reg%d=%s\n", p,
                  st == NRT_SUCCESS ? "ok" : ("err" + std::to_string(st)).c_str());
    }
  }
  // neuronPreferredNcRidNic[Bdf] for this rank's own device (a = device,
  // b = the rid neuronGetCommInfo reports), then for a device no comm has.
  {
    std::vector<enc_peer_info_t> peers(static_cast<size_t>(nranks));
    nccl_comm_info_t again{};
    again.peers = peers.data();
    check(t->neuronGetCommInfo(comm, &again), "neuronGetCommInfo(peers)");
    const enc_peer_info_t& me = peers[static_cast<size_t>(rank)];
    int nic = -1;
    NRT_STATUS st = t->neuronPreferredNcRidNic(me.neuron_dev, me.rid, &nic);
    std::printf("nic_status=%d\nnic=%d\n", static_cast<int>(st), nic);
    st = t->neuronPreferredNcRidNic(me.neuron_dev + 1000, me.rid, &nic);
    std::printf("nic_unknown_status=%d\n", static_cast<int>(st));
    char bdf[2] = {'x', 'x'};
    st = t->neuronPreferredNcRidNicBdf(me.neuron_dev, me.rid, bdf, sizeof bdf);
    std::printf("bdf_short_status=%d\n", static_cast<int>(st));
  }
  // Nobody frees its comm (and closes its connections) before everyone is done.
  std::vector<int> fence(nranks, 0);
  check(t->neuronBootstrapAllGather(comm, fence.data(), sizeof(int), "fence"), "fence");
  check(t->neuronFreeComm(comm), "neuronFreeComm");
  std::printf("ok=1\n");
  return 0;
}
