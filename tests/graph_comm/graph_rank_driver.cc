// graph_rank_driver — one rank of a communicator as its own process, through
// the real libnccom exports loaded by the reference runtime: init, then
// neuronBuildGraphComm (topology plugins, rings, transports), then
// neuronGetCommInfo and the ring connectors.
//
//   graph_rank_driver NRANKS RANK HOST LOCAL_INDEX --make-id | --id HEX
//
// The rank's device is LOCAL_INDEX (one rank per device, as many devices as
// ranks on its host: NEURON_RT_EMU_DEVICES). Prints "id=<hex>" first (with
// --make-id), then key=value lines: channel_n, ring<c>=r0,r1,... (userRanks
// from this rank), prev<c>, next<c>, dup<c>, mla_cycle_n, and ok=1; on
// failure error=... and exit 1.
#include <nrt_emu.h>

#include <cstdio>
#include <cstdlib>
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
  } else if (mode == "--id" && argc > 6) {
    const std::string hex = argv[6];
    if (hex.size() != 2 * NCCL_UNIQUE_ID_BYTES) die("the id must be 128 bytes in hex");
    for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; ++i) id[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  } else {
    die("unknown mode " + mode);
  }
  check(t->neuronInitComm(&comm, nranks, id, rank, &dev, false), "neuronInitComm");
  check(t->neuronBuildGraphComm(comm), "neuronBuildGraphComm");

  nccl_comm_info_t info{};
  check(t->neuronGetCommInfo(comm, &info), "neuronGetCommInfo");
  std::printf("channel_n=%d\nmla_cycle_n=%d\nkangaring_channel_n=%d\n", info.channel_n,
              info.mla_cycle_n, info.kangaring_channel_n);
  for (int c = 0; c < info.channel_n; ++c) {
    std::string ring;
    for (int i = 0; i < nranks; ++i) ring += (i ? "," : "") + std::to_string(info.rings[c].user_ranks[i]);
    std::printf("ring%d=%s\nprev%d=%d\nnext%d=%d\ndup%d=%d\n", c, ring.c_str(), c,
                info.rings[c].prev, c, info.rings[c].next, c, info.rings[c].duplicate ? 1 : 0);
    if (nranks > 1) {
      void* send = nullptr;
      void* recv = nullptr;
      check(t->neuronGetNetConnector(comm, ENC_PATTERN_RING, c, true, &send), "neuronGetNetConnector(send)");
      check(t->neuronGetNetConnector(comm, ENC_PATTERN_RING, c, false, &recv), "neuronGetNetConnector(recv)");
      if (send == nullptr || recv == nullptr || send == recv) die("channel connectors are not distinct");
    }
  }
  // Nobody frees its comm (and closes its connections) before everyone is done.
  std::vector<int> fence(nranks, 0);
  check(t->neuronBootstrapAllGather(comm, fence.data(), sizeof(int), "fence"), "fence");
  check(t->neuronFreeComm(comm), "neuronFreeComm");
  std::printf("ok=1\n");
  return 0;
}
