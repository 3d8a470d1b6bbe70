/*
 * nccom_bench_mpi_init — the OpenMPI side of the communicator-init benchmark.
 *
 * Each rank takes t_start (CLOCK_MONOTONIC) just before MPI_Init and t_end
 * just after an MPI_Allgather of 112 bytes per rank, so the span covers
 * MPI_Init's wire-up plus the first collective, like nccom's neuronInitComm
 * plus its first all-gather. Rank 0 gathers the stamps (not measured) and
 * prints "t_start_min=<ns> t_start_max=<ns> t_end_max=<ns>"; the time is
 * t_end_max - t_start_min. t_start_max shows how late the last rank started.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

enum { kSliceBytes = 112 };

static int64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(int argc, char** argv) {
  const int64_t t_start = monotonic_ns();
  MPI_Init(&argc, &argv);
  int rank = 0, nranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);

  unsigned char mine[kSliceBytes];
  memset(mine, rank & 0xff, sizeof mine);
  unsigned char* all = malloc((size_t)kSliceBytes * (size_t)nranks);
  if (all == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Allgather(mine, kSliceBytes, MPI_BYTE, all, kSliceBytes, MPI_BYTE, MPI_COMM_WORLD);
  const int64_t t_end = monotonic_ns();

  for (int r = 0; r < nranks; ++r) {
    if (all[(size_t)kSliceBytes * (size_t)r] != (r & 0xff)) {
      fprintf(stderr, "rank %d: all-gather slice %d is wrong\n", rank, r);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }

  int64_t stamps[2] = {t_start, t_end};
  int64_t* gathered = rank == 0 ? malloc(sizeof stamps * (size_t)nranks) : NULL;
  if (rank == 0 && gathered == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Gather(stamps, 2, MPI_INT64_T, gathered, 2, MPI_INT64_T, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    int64_t start_min = gathered[0], start_max = gathered[0], end_max = gathered[1];
    for (int r = 1; r < nranks; ++r) {
      if (gathered[2 * r] < start_min) start_min = gathered[2 * r];
      if (gathered[2 * r] > start_max) start_max = gathered[2 * r];
      if (gathered[2 * r + 1] > end_max) end_max = gathered[2 * r + 1];
    }
    printf("t_start_min=%lld t_start_max=%lld t_end_max=%lld\n", (long long)start_min,
           (long long)start_max, (long long)end_max);
    fflush(stdout);
    free(gathered);
  }
  free(all);
  MPI_Finalize();
  return 0;
}
