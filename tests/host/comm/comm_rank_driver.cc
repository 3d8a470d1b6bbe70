// comm_rank_driver — one rank of a communicator as its own process, driven
// through the real libnccom exports exactly as a runtime would call them
// (loaded by the reference runtime's loader).
//
//   comm_rank_driver NRANKS RANK HOST --make-id          rank that makes the id
//   comm_rank_driver NRANKS RANK HOST --id HEX           rank that is given the id
//   comm_rank_driver NRANKS RANK HOST --root HOST:PORT   global comm from a root address
//
// Prints "id=<hex>" (with --make-id) first, then "key=value" results, and
// exits 0 when every check passed, 1 with "error=..." otherwise.
#include <nrt_emu.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

const nccom_export_table_t* t = nullptr;

[[noreturn]] void die(const std::string& what) {
  std::printf("error=%s\n", what.c_str());
  std::fflush(stdout);
  std::exit(1);
}

void check(NRT_STATUS status, const char* what) {
  if (status != NRT_SUCCESS) die(std::string(what) + " returned " + std::to_string(status));
}

std::string to_hex(const char* bytes, std::size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    out += digits[(bytes[i] >> 4) & 15];
    out += digits[bytes[i] & 15];
  }
  return out;
}

std::vector<char> from_hex(const std::string& hex) {
  std::vector<char> out(hex.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5)
    die("usage: comm_rank_driver NRANKS RANK HOST (--make-id | --id HEX | --root ADDR)");
  const int nranks = std::atoi(argv[1]);
  const int rank = std::atoi(argv[2]);
  const int host = std::atoi(argv[3]);
  const std::string mode = argv[4];

  if (nrt_emu_load_nccom() != NRT_SUCCESS) die(std::string("load: ") + nrt_emu_last_error());
  t = nrt_emu_nccom_table();

  enc_neuron_device_info_t dev{};
  dev.nec_dev_id = rank;
  dev.mla_idx = rank;
  dev.host_device_id = rank;
  dev.virtual_server_id = static_cast<uint32_t>(host);

  void* comm = nullptr;
  if (mode == "--make-id") {
    char id[NCCL_UNIQUE_ID_BYTES];
    check(t->neuronGetUniqueId(id, nranks, "nccl init comm"), "neuronGetUniqueId");
    std::printf("id=%s\n", to_hex(id, sizeof id).c_str());
    std::fflush(stdout);
    check(t->neuronInitComm(&comm, nranks, id, rank, &dev, false), "neuronInitComm");
  } else if (mode == "--id" && argc > 5) {
    std::vector<char> id = from_hex(argv[5]);
    if (id.size() != NCCL_UNIQUE_ID_BYTES) die("the id must be 128 bytes in hex");
    check(t->neuronInitComm(&comm, nranks, id.data(), rank, &dev, false), "neuronInitComm");
  } else if (mode == "--root" && argc > 5) {
    check(t->neuronInitGlobalComm(rank, nranks, &dev, argv[5], &comm, "global"),
          "neuronInitGlobalComm");
  } else {
    die("unknown mode " + mode);
  }

  // The runtime's view: ranks, hosts, peers, cluster id and epoch.
  std::vector<enc_peer_info_t> peers(nranks);
  nccl_comm_info_t info{};
  info.peers = peers.data();
  check(t->neuronGetCommInfo(comm, &info), "neuronGetCommInfo");
  if (info.rank != rank || info.rank_n != nranks) die("comm info has the wrong rank or size");
  for (int r = 0; r < nranks; ++r) {
    if (peers[r].neuron_dev != r) die("peer " + std::to_string(r) + " has the wrong device");
  }
  std::printf("cluster_id=%llx\nepoch=%lld\nnode_n=%d\nlocal_rank_n=%d\n",
              static_cast<unsigned long long>(info.cluster_id), static_cast<long long>(info.epoch),
              info.node_n, info.local_rank_n);

  // All-gather through the export, and the 17/129-byte messages libnrt sends
  // around a ring.
  std::vector<unsigned char> slices(64 * nranks, 0);
  for (int i = 0; i < 64; ++i) slices[64 * rank + i] = static_cast<unsigned char>(rank + i);
  check(t->neuronBootstrapAllGather(comm, slices.data(), 64, "test"), "neuronBootstrapAllGather");
  for (int r = 0; r < nranks; ++r) {
    for (int i = 0; i < 64; ++i) {
      if (slices[64 * r + i] != static_cast<unsigned char>(r + i))
        die("all-gather slice " + std::to_string(r));
    }
  }
  if (nranks > 1) {
    unsigned char out[129], in[129];
    std::memset(out, rank, sizeof out);
    check(t->neuronBootstrapSend(comm, (rank + 1) % nranks, out, 17, "sig"), "neuronBootstrapSend");
    check(t->neuronBootstrapSend(comm, (rank + 1) % nranks, out, 129, "id"), "neuronBootstrapSend");
    const int from = (rank + nranks - 1) % nranks;
    check(t->neuronBootstrapRecv(comm, from, in, 17, "sig"), "neuronBootstrapRecv");
    check(t->neuronBootstrapRecv(comm, from, in, 129, "id"), "neuronBootstrapRecv");
    for (unsigned char b : in) {
      if (b != from) die("ring message bytes");
    }
    // Nobody leaves before everybody got its messages.
    check(t->neuronBootstrapAllGather(comm, slices.data(), 64, "fence"), "fence");
  }
  check(t->neuronFreeComm(comm), "neuronFreeComm");
  std::printf("ok=1\n");
  return 0;
}
