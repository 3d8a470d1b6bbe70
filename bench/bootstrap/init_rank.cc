// nccom_bench_init_rank — one rank of the communicator-init benchmark, as its
// own process, driving the real libnccom exports through the reference
// runtime exactly as a runtime would.
//
//   nccom_bench_init_rank NRANKS RANK HOST
//
// Loading libnccom is not measured: every rank loads it first and says
// "loaded". Then rank 0 makes the unique id and prints "id=<hex> t_id=<ns>";
// every other rank reads the id hex from one line of stdin. All ranks call
// neuronInitComm and one 112-byte all-gather and print "t_ready=<ns>"
// (CLOCK_MONOTONIC, comparable across processes of one machine). A second
// all-gather fences the exit, so nobody tears down sockets a peer still needs.
// On failure: "error=..." and exit 1.
#include <nrt_emu.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

namespace {

// The size libnrt all-gathers right after init (one slice per rank).
constexpr std::size_t kSliceBytes = 112;

[[noreturn]] void die(const std::string& what) {
  std::printf("error=%s\n", what.c_str());
  std::fflush(stdout);
  std::exit(1);
}

void check(NRT_STATUS status, const char* what) {
  if (status != NRT_SUCCESS) die(std::string(what) + " returned " + std::to_string(status));
}

int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
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

bool from_hex(const std::string& hex, char* out, std::size_t n) {
  if (hex.size() != 2 * n) return false;
  for (std::size_t i = 0; i < n; ++i) {
    char* end = nullptr;
    const std::string pair = hex.substr(2 * i, 2);
    const long v = std::strtol(pair.c_str(), &end, 16);
    if (end != pair.c_str() + 2) return false;
    out[i] = static_cast<char>(v);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) die("usage: nccom_bench_init_rank NRANKS RANK HOST");
  const int nranks = std::atoi(argv[1]);
  const int rank = std::atoi(argv[2]);
  const int host = std::atoi(argv[3]);
  if (nranks < 1 || rank < 0 || rank >= nranks || host < 0) die("bad NRANKS RANK HOST");

  if (nrt_emu_load_nccom() != NRT_SUCCESS) die(std::string("load: ") + nrt_emu_last_error());
  const nccom_export_table_t* t = nrt_emu_nccom_table();
  std::printf("loaded\n");
  std::fflush(stdout);

  char id[NCCL_UNIQUE_ID_BYTES];
  if (rank == 0) {
    check(t->neuronGetUniqueId(id, nranks, "bench init"), "neuronGetUniqueId");
    const int64_t t_id = monotonic_ns();
    std::printf("id=%s t_id=%lld\n", to_hex(id, sizeof id).c_str(), static_cast<long long>(t_id));
    std::fflush(stdout);
  } else {
    std::string line;
    if (!std::getline(std::cin, line)) die("no id on stdin");
    if (!from_hex(line, id, sizeof id)) die("the id must be 128 bytes in hex");
  }

  enc_neuron_device_info_t dev{};
  dev.nec_dev_id = rank;
  dev.mla_idx = rank;
  dev.host_device_id = rank;
  dev.virtual_server_id = static_cast<uint32_t>(host);

  void* comm = nullptr;
  check(t->neuronInitComm(&comm, nranks, id, rank, &dev, false), "neuronInitComm");
  std::vector<unsigned char> slices(kSliceBytes * nranks, 0);
  std::memset(slices.data() + kSliceBytes * rank, rank & 0xff, kSliceBytes);
  check(t->neuronBootstrapAllGather(comm, slices.data(), kSliceBytes, "bench"),
        "neuronBootstrapAllGather");
  const int64_t t_ready = monotonic_ns();

  for (int r = 0; r < nranks; ++r) {
    if (slices[kSliceBytes * r] != (r & 0xff)) die("all-gather slice " + std::to_string(r));
  }
  std::printf("t_ready=%lld\n", static_cast<long long>(t_ready));
  std::fflush(stdout);

  check(t->neuronBootstrapAllGather(comm, slices.data(), kSliceBytes, "fence"), "fence");
  check(t->neuronFreeComm(comm), "neuronFreeComm");
  return 0;
}
