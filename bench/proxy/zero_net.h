// A zero-cost ncclNet_v6 table, in process: the network the proxy benchmark
// puts under the NET_NEURON transport so that what it times is the proxy.
//
// A listen creates a channel (one ordered stream between one sender and one
// receiver); the handle carries its address, so connect/accept complete at
// once. The n-th isend on a channel matches the n-th irecv. isend and irecv
// return a request at once (or NULL, "retry", when the ring of pending sends
// or the request pool is full); test() reports a send done at once and a
// receive done as soon as its matching send was posted, with the send's size.
// Nothing moves unless `copy` is set, in which case the receive's test()
// copies the bytes and the send completes only after that copy.
//
// Each comm is used by one thread at a time (the proxy of its rank); a
// channel's two sides may live on different threads (atomics between them).
#pragma once

#include <nccom/net_v6.h>

namespace nccom::bench {

struct ZeroNetOptions {
  bool copy = false;  // memcpy the bytes in the receive's test()
};

// The table (name "zero"); options apply to comms created afterwards.
const ncclNet_v6_t* zero_net(ZeroNetOptions options);

}  // namespace nccom::bench
