/*
 * nccom_bench_mpi_coll — Open MPI's side of the collective benchmark
 * (bench/coll/README.md): MPI_Allreduce (fp32 sum) and MPI_Allgather (fp32)
 * over a geometric series of sizes, timed as nccl-tests times a collective.
 *
 * Per size: fill the input with the check pattern, `warmup` untimed calls,
 * MPI_Barrier, then `iters` calls between two MPI_Wtime stamps; the row's
 * time is the mean per call of the slowest rank (MPI_MAX over ranks, as
 * nccom-test does). Then one more call on fresh input is checked against
 * the pattern (not timed) and the wrong elements are summed over ranks.
 * The transport is whatever mpirun selects (bench/coll/run.sh passes
 * `--mca pml ob1 --mca btl self,vader` or `self,tcp`).
 *
 *   mpirun -np 4 nccom_bench_mpi_coll -b 8 -e 64M -f 2 -n 20 -w 5 allr allg
 */
#include "coll_common.h"

#include <mpi.h>

struct buffers {
  float *send, *recv;
};

static void run_call(enum coll_op op, const struct buffers* b, uint64_t count) {
  if (op == COLL_ALLREDUCE) {
    MPI_Allreduce(b->send, b->recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  } else {
    MPI_Allgather(b->send, (int)count, MPI_FLOAT, b->recv, (int)count, MPI_FLOAT, MPI_COMM_WORLD);
  }
}

static void fill_input(enum coll_op op, const struct buffers* b, uint64_t count, int rank) {
  for (uint64_t i = 0; i < count; ++i) b->send[i] = coll_input(op, rank, i);
}

/* Untimed small all-reduces until rank 0 has seen COLL_SETTLE_SECONDS pass. */
static void settle(int rank) {
  const double t0 = MPI_Wtime();
  int stop = 0;
  while (!stop) {
    int mine = rank == 0 && MPI_Wtime() - t0 >= COLL_SETTLE_SECONDS;
    MPI_Allreduce(&mine, &stop, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  }
}

/* Times and checks one size; rank 0 prints the row. Returns the wrong count. */
static uint64_t run_size(enum coll_op op, const struct buffers* b, uint64_t bytes, int rank,
                         int nranks, const struct coll_options* o) {
  const uint64_t count = coll_count(op, bytes, nranks);
  fill_input(op, b, count, rank);
  for (int i = 0; i < o->warmup; ++i) run_call(op, b, count);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < o->iters; ++i) run_call(op, b, count);
  const double mine_us = (MPI_Wtime() - t0) * 1e6 / o->iters;
  double slowest_us = 0;
  MPI_Allreduce(&mine_us, &slowest_us, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

  /* The check: the output poisoned first, so a call that writes nothing fails. */
  const uint64_t out_count = op == COLL_ALLREDUCE ? count : count * (uint64_t)nranks;
  memset(b->recv, 0xA5, out_count * sizeof(float));
  fill_input(op, b, count, rank);
  run_call(op, b, count);
  unsigned long long mine_wrong = coll_count_wrong(op, b->recv, count, nranks), wrong = 0;
  MPI_Allreduce(&mine_wrong, &wrong, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) coll_print_row(op, nranks, count, slowest_us, wrong);
  return wrong;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);

  struct coll_options o;
  if (!coll_parse_options(argc, argv, 0, &o)) {
    MPI_Finalize();
    return 2;
  }
  /* MPI counts are int: the largest all-reduce must fit. */
  if (o.max_bytes / sizeof(float) > (uint64_t)INT32_MAX) {
    if (rank == 0)
      fprintf(stderr, "%s: -e %llu exceeds MPI's int count\n", argv[0],
              (unsigned long long)o.max_bytes);
    MPI_Finalize();
    return 2;
  }
  /* Both buffers hold the largest size: all-reduce needs size in and out,
   * all-gather size / n in and size out. */
  struct buffers b;
  b.send = malloc(o.max_bytes);
  b.recv = malloc(o.max_bytes);
  if (b.send == NULL || b.recv == NULL) {
    fprintf(stderr, "rank %d: cannot allocate 2 x %llu bytes\n", rank,
            (unsigned long long)o.max_bytes);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  settle(rank);
  uint64_t wrong = 0;
  for (int k = 0; k < COLL_NUM_OPS; ++k) {
    if (!o.ops[k]) continue;
    if (rank == 0) coll_print_header("mpi_coll", (enum coll_op)k, nranks, &o);
    for (uint64_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= o.factor) {
      wrong += run_size((enum coll_op)k, &b, bytes, rank, nranks, &o);
    }
  }
  if (rank == 0)
    printf("# Wrong elements : %llu %s\n", (unsigned long long)wrong, wrong == 0 ? "OK" : "FAILED");
  free(b.send);
  free(b.recv);
  MPI_Finalize();
  return wrong == 0 ? 0 : 1;
}
