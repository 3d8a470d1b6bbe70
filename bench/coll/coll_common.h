/*
 * What the two peer programs of the collective benchmark (mpi_coll.c,
 * gloo_coll.cc) share: the command line, the size series, the element
 * counts and bus-bandwidth factors of nccl-tests, the check pattern and the
 * table. Plain C so both the C (mpicc) and the C++ program include it; every
 * function is static so each program has its own copy.
 *
 * The sizes, counts and factors follow nccl-tests (and tools/nccom-test), so
 * a row of either program lines up with nccom-test's row of the same size:
 *   all-reduce:  count = size / 4 elements per rank, busbw factor 2(n-1)/n;
 *   all-gather:  "size" is the whole output, count = size / 4 / n elements
 *                per rank, rounded down (the row shows count * 4 * n bytes),
 *                busbw factor (n-1)/n.
 */
#ifndef NCCOM_BENCH_COLL_COMMON_H
#define NCCOM_BENCH_COLL_COMMON_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* C names: this header is shared with the C programs of the MPI and Gloo
 * peers. */
/* NOLINTBEGIN(readability-identifier-naming) */
enum coll_op { COLL_ALLREDUCE = 0, COLL_ALLGATHER = 1, COLL_NUM_OPS = 2 };

static const char* const coll_op_names[COLL_NUM_OPS] = {"allr", "allg"};

/* The command line of both programs. rank/size/store are the Gloo program's
 * own rendezvous (MPI takes them from mpirun); -1 / NULL when not given. */
struct coll_options {
  uint64_t min_bytes, max_bytes;
  uint64_t factor;
  int iters, warmup;
  int ops[COLL_NUM_OPS]; /* 1 = run this operation */
  int rank, size;
  const char* store;
};

/* "64M", "4K", "1G", "8" (binary multiples, as nccl-tests). 0 on a bad size. */
static uint64_t coll_parse_bytes(const char* s) {
  char* end = NULL;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno != 0 || end == s || s[0] == '-') return 0;
  uint64_t mult = 1;
  if (*end == 'K' || *end == 'k')
    mult = 1ull << 10, ++end;
  else if (*end == 'M' || *end == 'm')
    mult = 1ull << 20, ++end;
  else if (*end == 'G' || *end == 'g')
    mult = 1ull << 30, ++end;
  if (*end == 'B' || *end == 'b') ++end;
  if (*end != '\0' || v > (UINT64_C(4) << 30) / mult) return 0;
  return (uint64_t)v * mult;
}

static int coll_parse_int(const char* s, int min, int* out) {
  char* end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < min || v > 1000000) return 0;
  *out = (int)v;
  return 1;
}

static void coll_usage(const char* prog, int with_rendezvous) {
  fprintf(stderr,
          "usage: %s [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUP]%s allr|allg...\n"
          "  sizes in bytes with K/M/G suffixes (default -b 8 -e 1M -f 2 -n 20 -w 5);\n"
          "  fp32, sum; one table row per size, printed by rank 0\n",
          prog, with_rendezvous ? " --rank R --size N --store DIR" : "");
}

/* Parses argv into *o. Returns 1, or prints one line naming the bad argument
 * and returns 0. --rank/--size/--store are accepted only with_rendezvous. */
static int coll_parse_options(int argc, char** argv, int with_rendezvous, struct coll_options* o) {
  memset(o, 0, sizeof *o);
  o->min_bytes = 8;
  o->max_bytes = 1u << 20;
  o->factor = 2;
  o->iters = 20;
  o->warmup = 5;
  o->rank = -1;
  o->size = -1;
  int any_op = 0;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    int factor = 0, ok = 1, takes_value = 1;
    if (strcmp(a, "-b") == 0 && v)
      ok = (o->min_bytes = coll_parse_bytes(v)) != 0;
    else if (strcmp(a, "-e") == 0 && v)
      ok = (o->max_bytes = coll_parse_bytes(v)) != 0;
    else if (strcmp(a, "-f") == 0 && v) {
      ok = coll_parse_int(v, 2, &factor);
      o->factor = (uint64_t)factor;
    } else if (strcmp(a, "-n") == 0 && v)
      ok = coll_parse_int(v, 1, &o->iters);
    else if (strcmp(a, "-w") == 0 && v)
      ok = coll_parse_int(v, 0, &o->warmup);
    else if (with_rendezvous && strcmp(a, "--rank") == 0 && v)
      ok = coll_parse_int(v, 0, &o->rank);
    else if (with_rendezvous && strcmp(a, "--size") == 0 && v)
      ok = coll_parse_int(v, 1, &o->size);
    else if (with_rendezvous && strcmp(a, "--store") == 0 && v)
      o->store = v;
    else {
      takes_value = 0;
      int known = 0;
      for (int k = 0; k < COLL_NUM_OPS; ++k) {
        if (strcmp(a, coll_op_names[k]) == 0) o->ops[k] = known = any_op = 1;
      }
      if (!known) {
        fprintf(stderr, "%s: unknown or incomplete argument '%s'\n", argv[0], a);
        coll_usage(argv[0], with_rendezvous);
        return 0;
      }
    }
    if (!ok) {
      fprintf(stderr, "%s: bad value '%s' for %s\n", argv[0], v, a);
      return 0;
    }
    i += takes_value;
  }
  if (!any_op) {
    fprintf(stderr, "%s: no operation given (allr, allg)\n", argv[0]);
    coll_usage(argv[0], with_rendezvous);
    return 0;
  }
  if (o->min_bytes > o->max_bytes) {
    fprintf(stderr, "%s: -b %llu is larger than -e %llu\n", argv[0],
            (unsigned long long)o->min_bytes, (unsigned long long)o->max_bytes);
    return 0;
  }
  if (with_rendezvous && (o->rank < 0 || o->size < 1 || o->store == NULL || o->rank >= o->size)) {
    fprintf(stderr, "%s: --rank R --size N --store DIR are required, with 0 <= R < N\n", argv[0]);
    return 0;
  }
  return 1;
}

/* Seconds of untimed calls before the first size. mpirun's daemon and the
 * ranks' PMIx threads keep the CPUs busy for about half a second after start:
 * without this the first one or two sizes of an Open MPI run took ~20 ms per
 * call instead of ~0.6 us on this 2-core machine. Gloo does the same for
 * symmetry. All ranks stop together: rank 0 decides, a max all-reduce tells. */
#define COLL_SETTLE_SECONDS 1.0

/* Elements each rank contributes (all-reduce: the whole vector). */
static uint64_t coll_count(enum coll_op op, uint64_t bytes, int nranks) {
  return op == COLL_ALLREDUCE ? bytes / sizeof(float) : bytes / sizeof(float) / (uint64_t)nranks;
}

/* The size a row shows: what was really moved, after rounding down. */
static uint64_t coll_row_bytes(enum coll_op op, uint64_t count, int nranks) {
  return op == COLL_ALLREDUCE ? count * sizeof(float) : count * sizeof(float) * (uint64_t)nranks;
}

static double coll_busbw_factor(enum coll_op op, int nranks) {
  const double n = nranks;
  return op == COLL_ALLREDUCE ? 2.0 * (n - 1) / n : (n - 1) / n;
}

/* The check pattern: small integers, so every sum in any order is exact in
 * fp32. all-reduce: rank r gives (r + 1) * (i % 5 + 1); the sum over n ranks
 * is n(n+1)/2 * (i % 5 + 1). all-gather: rank r gives r * 1000 + i % 1000. */
static float coll_input(enum coll_op op, int rank, uint64_t i) {
  return op == COLL_ALLREDUCE ? (float)((rank + 1) * (int)(i % 5 + 1))
                              : (float)(rank * 1000 + (int)(i % 1000));
}

/* Counts the elements of a result that differ from the pattern's. */
static uint64_t coll_count_wrong(enum coll_op op, const float* out, uint64_t count, int nranks) {
  uint64_t wrong = 0;
  if (op == COLL_ALLREDUCE) {
    const int tri = nranks * (nranks + 1) / 2;
    for (uint64_t i = 0; i < count; ++i) wrong += out[i] != (float)(tri * (int)(i % 5 + 1));
  } else {
    for (int r = 0; r < nranks; ++r) {
      for (uint64_t i = 0; i < count; ++i)
        wrong += out[(uint64_t)r * count + i] != coll_input(op, r, i);
    }
  }
  return wrong;
}

static void coll_print_header(const char* impl, enum coll_op op, int nranks,
                              const struct coll_options* o) {
  printf("# %s %s: %d rank(s), fp32 %s, %d iters after %d warmup, time = slowest rank\n", impl,
         coll_op_names[op], nranks, op == COLL_ALLREDUCE ? "sum" : "none", o->iters, o->warmup);
  printf("#%5s  %12s  %12s  %5s  %12s  %12s  %12s  %8s\n", "op", "size(B)", "count(elems)", "type",
         "time(us)", "algbw(GB/s)", "busbw(GB/s)", "#wrong");
}

/* One row; time_us is the slowest rank's mean over the timed iterations.
 * Bandwidths have 6 significant digits so small sizes keep usable ratios. */
static void coll_print_row(enum coll_op op, int nranks, uint64_t count, double time_us,
                           uint64_t wrong) {
  const uint64_t bytes = coll_row_bytes(op, count, nranks);
  const double algbw = time_us > 0 ? (double)bytes / 1e3 / time_us : 0.0;
  const double busbw = algbw * coll_busbw_factor(op, nranks);
  printf(" %5s  %12llu  %12llu  %5s  %12.2f  %12.6g  %12.6g  %8llu\n", coll_op_names[op],
         (unsigned long long)bytes, (unsigned long long)count, "fp32", time_us, algbw, busbw,
         (unsigned long long)wrong);
  fflush(stdout);
}

/* NOLINTEND(readability-identifier-naming) */

#endif /* NCCOM_BENCH_COLL_COMMON_H */
