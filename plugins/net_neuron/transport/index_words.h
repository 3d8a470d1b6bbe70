// The device-published index words the primitives read (nec.h's runtime-owned
// structs, as the original's ringGetPending reads them):
// enc_net_connector.net_host_mem.va is an enc_net_host_memory_t whose
// post_send[f] / post_recv[f] words the device advances, modulo
// net_idx_loop_size, once per FIFO entry it releases. With fold_n > 1 an entry
// counts as published once every fold has published it
// (docs/decisions/net-neuron-transport.md, "Folds").
#pragma once

#include <nccom/nrt_abi.h>
#include <nccom/util/result.h>

#include <cstdint>
#include <string>
#include <vector>

namespace nccom::net_neuron {

struct IndexWord {
  const void* va = nullptr;
  volatile uint32_t* fold[NEC_MAX_FOLD_N] = {};
  int fold_n = 0;
  uint32_t loop = 0;
  uint32_t tail = 0;  // tail_idx: entries consumed, modulo loop
};

class IndexWords {
 public:
  // The word of `nc` (post_send when `send`), added once per host memory.
  // `at` names the op for errors (fold_n, NULL memory, loop-size conflicts).
  Result<int> add(const enc_net_connector_t* nc, bool send, uint32_t loop, const std::string& at);
  // ringGetPending: entries published and not yet consumed.
  uint32_t pending(int w) const;
  void consume(int w);
  // End of an execution: every word must stand exactly at its tail (nothing
  // published beyond EXEC_COMPLETE); each fold word is then set back to 0 for
  // the next execution, and the tails too.
  Status reset_for_next_execution();
  size_t size() const { return words_.size(); }
  const IndexWord& at(int w) const { return words_[static_cast<size_t>(w)]; }

 private:
  std::vector<IndexWord> words_;
};

}  // namespace nccom::net_neuron
