// A wrapping ncclNet_v6 table for back-pressure and received-size tests: it
// forwards to a real plugin but refuses posts (NULL request, "retry later"),
// holds completed requests back for a number of test() calls, reports
// received sizes as a plugin of another kind would (not at all, or wrong),
// and counts what was posted.
#pragma once

#include <nccom/net_v6.h>

#include <atomic>

namespace nn_test {

struct WrapConfig {
  int null_every = 0;                 // > 1: only every n-th isend/irecv/iread call may post
  int hold_tests = 0;                 // completed requests report "not done" this many more times
  bool recv_sizes_unwritten = false;  // test of a receive leaves sizes untouched
  int recv_size_error = 0;            // added to every received size test reports
};

struct WrapStats {
  std::atomic<int> isend_posted{0}, irecv_posted{0}, iread_posted{0};
  std::atomic<int> refused{0}, held{0};
};

// One wrapper per process at a time (the tests run one after another).
const ncclNet_v6_t* wrap_net(const ncclNet_v6_t* inner, WrapConfig config);
WrapStats& wrap_stats();

}  // namespace nn_test
