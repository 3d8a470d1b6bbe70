// One measured communicator init, nccom or OpenMPI: start the processes,
// collect their clock stamps, turn them into one figure.
#pragma once

#include <chrono>
#include <string>

namespace nccom_bench {

struct RunResult {
  bool ok = false;
  double ms = 0;             // the init time
  double start_skew_ms = 0;  // OpenMPI: last rank's t_start - first rank's
  std::string error;         // why it failed: which ranks, and what they said
  std::string warning;       // something went wrong after the measured span
};

struct NccomRun {
  std::string rank_program;  // nccom_bench_init_rank
  int nranks = 2;
  int hosts = 1;         // emulated hosts (virtual_server_id)
  std::string protocol;  // flat | hierarchical
  std::chrono::seconds timeout{300};
};

// max(t_ready) - t_id over all ranks. Ranks 1..n-1 are started first and
// loaded before rank 0 makes the id, so neither process start nor library
// loading is measured.
RunResult run_nccom_once(const NccomRun& run);

struct MpiRun {
  std::string mpirun;       // mpirun (Open MPI)
  std::string mpi_program;  // nccom_bench_mpi_init
  int nranks = 2;
  std::chrono::seconds timeout{300};
};

// max(t_end) - min(t_start): MPI_Init plus one 112-byte MPI_Allgather, on
// loopback only, oversubscribed. When rank 0 printed its stamps but mpirun
// still exited non-zero (Open MPI 4.x's exit race, ompi#7833, seen at 256
// oversubscribed ranks), the figure stands and `warning` says what happened.
RunResult run_mpi_once(const MpiRun& run);

// Host index of `rank` when `nranks` ranks are spread in blocks over `hosts`.
int host_of(int rank, int nranks, int hosts);

}  // namespace nccom_bench
