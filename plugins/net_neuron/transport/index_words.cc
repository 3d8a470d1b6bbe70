#include "index_words.h"

#include <algorithm>

namespace nccom::net_neuron {
namespace {

uint32_t load_acquire(volatile uint32_t* p) {
  // Acquire: the device's data writes before its index update are visible.
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

}  // namespace

Result<int> IndexWords::add(const enc_net_connector_t* nc, bool send, uint32_t loop,
                            const std::string& at) {
  const void* va = nc->net_host_mem.va;
  if (va == nullptr) {
    return make_error(NRT_INVALID, at + ": its connector's net_host_mem.va is NULL (no index "
                                        "words to read posted entries from)");
  }
  if (nc->fold_n < 1 || nc->fold_n > NEC_MAX_FOLD_N) {
    return make_error(NRT_INVALID, at + ": its connector's fold_n is " +
                                       std::to_string(nc->fold_n) + ", outside 1.." +
                                       std::to_string(NEC_MAX_FOLD_N));
  }
  if (loop == 0 || loop > 512) {
    return make_error(NRT_INVALID,
                      at + ": net_idx_loop_size " + std::to_string(loop) + " is outside 1..512");
  }
  for (size_t i = 0; i < words_.size(); ++i) {
    if (words_[i].va != va) continue;
    if (words_[i].loop != loop || words_[i].fold_n != nc->fold_n) {
      return make_error(NRT_INVALID, at +
                                         ": shares its index words with an earlier op but "
                                         "has net_idx_loop_size " +
                                         std::to_string(loop) + " / fold_n " +
                                         std::to_string(nc->fold_n) + " instead of " +
                                         std::to_string(words_[i].loop) + " / " +
                                         std::to_string(words_[i].fold_n));
    }
    return static_cast<int>(i);
  }
  auto* mem = static_cast<enc_net_host_memory_t*>(const_cast<void*>(va));
  IndexWord w;
  w.va = va;
  w.fold_n = nc->fold_n;
  w.loop = loop;
  for (int f = 0; f < nc->fold_n; ++f) {
    w.fold[f] = send ? &mem->post_send[f].index : &mem->post_recv[f].index;
  }
  words_.push_back(w);
  return static_cast<int>(words_.size() - 1);
}

uint32_t IndexWords::pending(int wi) const {
  const IndexWord& w = words_[static_cast<size_t>(wi)];
  uint32_t n = w.loop;
  for (int f = 0; f < w.fold_n; ++f) {
    const uint32_t head = load_acquire(w.fold[f]) % w.loop;
    n = std::min(n, (head + w.loop - w.tail) % w.loop);
  }
  return n;
}

void IndexWords::consume(int wi) {
  IndexWord& w = words_[static_cast<size_t>(wi)];
  w.tail = (w.tail + 1) % w.loop;
}

Status IndexWords::reset_for_next_execution() {
  for (IndexWord& w : words_) {
    for (int f = 0; f < w.fold_n; ++f) {
      uint32_t seen = load_acquire(w.fold[f]);
      if (seen % w.loop != w.tail ||
          !__atomic_compare_exchange_n(w.fold[f], &seen, 0u, false, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE)) {
        return make_error(NRT_FAILURE, "the device published entries beyond EXEC_COMPLETE: fold " +
                                           std::to_string(f) + " index reads " +
                                           std::to_string(seen) + ", expected " +
                                           std::to_string(w.tail) + " (modulo " +
                                           std::to_string(w.loop) + ")");
      }
    }
    w.tail = 0;
  }
  return {};
}

}  // namespace nccom::net_neuron
