// Input patterns, buffer shapes and the reference results of --check.
//
// Every rank fills its input from a deterministic function of (rank, index)
// chosen per operation and type so that a correct result is exact (see
// docs/tools/nccom-test.md, "Data check"): sums only ever add small integers whose every
// partial sum the type represents, products multiply ±1 and one ±2, min/max
// and data movement use integers the type holds exactly. The reference is
// computed with the engine's own element library (nrt_emu_dtype).
#pragma once

#include "options.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nccom::nccomtest {

// The buffers of one operation at one message size, as nccl-tests sizes
// them: `bytes` is rounded down so every rank's share is whole elements.
struct Layout {
  size_t count = 0;       // the engine's count argument (nrt_emu_coll_args_t.count)
  size_t send_elems = 0;  // elements of the send buffer
  size_t recv_elems = 0;  // elements of the receive buffer
  size_t elems = 0;       // the table's count column (the larger buffer)
  uint64_t bytes = 0;     // the table's size column: elems × type size
};
Layout layout_for(Op op, uint64_t bytes, size_t type_size, int nranks);

// Where an in-place run puts its input and finds its output, in elements
// from the start of the one buffer (nccl-tests' convention): all-gather
// reads its input at rank × count; reduce-scatter writes its output there.
size_t inplace_send_offset(Op op, const Layout& l, int rank);
size_t inplace_recv_offset(Op op, const Layout& l, int rank);
// Elements the one in-place buffer needs.
size_t inplace_elems(Op op, const Layout& l);

// The largest integer magnitude the type holds exactly (capped at 2^20).
int64_t exact_limit(DType t);

// Element i of rank's input (as a value the type holds exactly).
double pattern_value(Op op, DType t, RedOp r, int rank, int nranks, size_t i);
// Stores elements [0, n) of rank's input into buf.
void fill_input(Op op, DType t, RedOp r, int rank, int nranks, void* buf, size_t n);

// What rank's output must hold after op: recv_elems elements, or none
// for a reduce's non-root ranks (nothing is defined there).
std::vector<unsigned char> expected_output(Op op, DType t, RedOp r, int rank, int nranks, int root,
                                           const Layout& l);

// The largest |got − expected| a correct engine may produce for one element
// of a float type (0 for integers, compared bit for bit).
double tolerance(DType t, RedOp r, Op op, double expected);

// Elements of got (n of them) that differ from expected beyond tolerance.
uint64_t count_wrong(Op op, DType t, RedOp r, const void* got, const void* expected, size_t n);

}  // namespace nccom::nccomtest
