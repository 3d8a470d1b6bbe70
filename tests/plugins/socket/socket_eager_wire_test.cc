// The eager negotiation on the wire (suite NetSocketEagerWire): the test
// plays the other end with raw TCP sockets, as a peer built without the eager
// path (zeros in the hello, no grant) or granting less than offered.
#include "socket_fixture.h"
#include "socket_raw_peer.h"
#include "socket_wire.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>

namespace nccom_test {
namespace {

using NetSocketEagerWire = SocketTest;

TEST_F(NetSocketEagerWire, AcceptorGrantsNothingToAPeerThatOffersNothing) {
  RawPeer peer;
  dial_as_raw_peer(net, lo, 0, 0, &peer);
  ASSERT_NE(peer.recv_comm, nullptr);
  void *listen = peer.listen, *recv_comm = peer.recv_comm;
  std::vector<RawSocket>& socks = peer.socks;
  RawSocket& ctrl = socks[0];
  RawSocket& data = socks[1];

  // A small message goes rendezvous; the first record back is its
  // clear-to-send, not a grant.
  std::vector<char> in(100);
  void* rreq = nullptr;
  void* buf = in.data();
  int size = 100, tag = 4;
  ASSERT_EQ(net->irecv(recv_comm, 1, &buf, &size, &tag, nullptr, &rreq), ncclSuccess);
  wire::CtrlMsg header{wire::kMsgHeader, 4, 0, 10};
  ASSERT_TRUE(ctrl.write_all(&header, sizeof header));
  wire::CtrlMsg reply{};
  ASSERT_TRUE(ctrl.read_all(&reply, sizeof reply));
  EXPECT_EQ(reply.type, wire::kMsgClearToSend);
  EXPECT_EQ(reply.id, 0u);
  EXPECT_EQ(reply.value, wire::kCtsAccept);
  ASSERT_TRUE(data.write_all("0123456789", 10));
  int got = -1;
  ASSERT_EQ(wait_request(net, rreq, &got), ncclSuccess);
  EXPECT_EQ(got, 10);
  EXPECT_EQ(memcmp(in.data(), "0123456789", 10), 0);

  // An eager record without a grant breaks the protocol: the comm fails.
  ASSERT_EQ(net->irecv(recv_comm, 1, &buf, &size, &tag, nullptr, &rreq), ncclSuccess);
  size_t warnings = warning_count();
  wire::CtrlMsg eager{wire::kMsgEager, 4, 1, 3};
  ASSERT_TRUE(ctrl.write_all(&eager, sizeof eager));
  ASSERT_TRUE(ctrl.write_all("abc", 3));
  EXPECT_EQ(wait_request(net, rreq), ncclInternalError);
  EXPECT_GT(warning_count(), warnings);
  EXPECT_EQ(net->closeRecv(recv_comm), ncclSuccess);
  EXPECT_EQ(net->closeListen(listen), ncclSuccess);
}

TEST_F(NetSocketEagerWire, AcceptorReadsTheOffersSizeFromBothHalvesOfTheHello) {
  struct Case {
    const char* what;
    uint32_t offer_max;
    uint16_t offer_credits;
    uint64_t granted_max, granted_credits;
  };
  const Case cases[] = {
      // A build whose limit fit the low half sent 0 in the high one.
      {"a 16-bit offer", 65535, 16, 65535, 16},
      {"an offer above this build's limits", 0xfffffffe, 60000, wire::kEagerMaxBytes,
       static_cast<uint64_t>(wire::kEagerCredits)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    RawPeer peer;
    dial_as_raw_peer(net, lo, c.offer_max, c.offer_credits, &peer);
    ASSERT_NE(peer.recv_comm, nullptr);
    wire::CtrlMsg grant{};
    ASSERT_TRUE(peer.socks[0].read_all(&grant, sizeof grant));
    EXPECT_EQ(grant.type, wire::kMsgEagerGrant);
    EXPECT_EQ(grant.id, c.granted_max);
    EXPECT_EQ(grant.value, c.granted_credits);
    EXPECT_EQ(net->closeRecv(peer.recv_comm), ncclSuccess);
    EXPECT_EQ(net->closeListen(peer.listen), ncclSuccess);
  }
}

TEST_F(NetSocketEagerWire, AcceptorGrantsAtMostTheOfferAndTakesSplitPayloads) {
  // A peer offering less than this build's limits: the grant follows the offer.
  RawPeer peer;
  dial_as_raw_peer(net, lo, 4096, 3, &peer);
  ASSERT_NE(peer.recv_comm, nullptr);
  void *listen = peer.listen, *recv_comm = peer.recv_comm;
  std::vector<RawSocket>& socks = peer.socks;
  RawSocket& ctrl = socks[0];
  wire::CtrlMsg grant{};
  ASSERT_TRUE(ctrl.read_all(&grant, sizeof grant));
  EXPECT_EQ(grant.type, wire::kMsgEagerGrant);
  EXPECT_EQ(grant.id, 4096u);
  EXPECT_EQ(grant.value, 3u);

  // An eager message whose payload arrives in two parts, its receive posted
  // in between: the receive takes it once the rest is in.
  std::vector<char> in(200), other(10);
  void *rreq = nullptr, *probe = nullptr;
  void* buf = other.data();
  int size = 10, tag = 99;
  ASSERT_EQ(net->irecv(recv_comm, 1, &buf, &size, &tag, nullptr, &probe), ncclSuccess);
  std::vector<char> payload(100);
  fill_pattern(payload, 5);
  wire::CtrlMsg eager{wire::kMsgEager, 6, 0, payload.size()};
  ASSERT_TRUE(ctrl.write_all(&eager, sizeof eager));
  ASSERT_TRUE(ctrl.write_all(payload.data(), 40));
  int done = 0;
  // Testing any request of the comm reads what arrived: the record and 40 bytes.
  for (int i = 0; i < 10; ++i) ASSERT_EQ(net->test(probe, &done, nullptr), ncclSuccess);
  buf = in.data();
  size = 200;
  tag = 6;
  ASSERT_EQ(net->irecv(recv_comm, 1, &buf, &size, &tag, nullptr, &rreq), ncclSuccess);
  ASSERT_TRUE(ctrl.write_all(payload.data() + 40, 60));
  int got = -1;
  ASSERT_EQ(wait_request(net, rreq, &got), ncclSuccess);
  EXPECT_EQ(got, 100);
  EXPECT_TRUE(std::equal(payload.begin(), payload.end(), in.begin()));

  // Beyond the granted size: a protocol error, the comm fails.
  size_t warnings = warning_count();
  wire::CtrlMsg big{wire::kMsgEager, 99, 1, 4097};
  ASSERT_TRUE(ctrl.write_all(&big, sizeof big));
  EXPECT_EQ(wait_request(net, probe), ncclInternalError);
  EXPECT_GT(warning_count(), warnings);
  EXPECT_EQ(net->closeRecv(recv_comm), ncclSuccess);
  EXPECT_EQ(net->closeListen(listen), ncclSuccess);
}

// The receiver reads its control stream ahead (one read takes a record, its
// payload and whatever follows): records and payloads cut at every byte, or
// several packed into one write, must all arrive intact, in order, and give
// their credits back.
TEST_F(NetSocketEagerWire, RecordsCutAtEveryByteOrPackedTogetherArriveIntact) {
  RawPeer peer;
  dial_as_raw_peer(net, lo, 4096, 8, &peer);
  ASSERT_NE(peer.recv_comm, nullptr);
  void *listen = peer.listen, *recv_comm = peer.recv_comm;
  RawSocket& ctrl = peer.socks[0];
  RawSocket& data = peer.socks[1];
  wire::CtrlMsg grant{};
  ASSERT_TRUE(ctrl.read_all(&grant, sizeof grant));
  ASSERT_EQ(grant.type, wire::kMsgEagerGrant);
  ASSERT_EQ(grant.value, 8u);

  // Messages 0-3 are eager (tags 1-4, the second one empty), 4 a rendezvous
  // header (tag 5), 5 eager again (tag 1).
  const int tags[] = {1, 2, 3, 4, 5, 1};
  const size_t sizes[] = {5, 0, 150, 70, 10, 33};
  std::vector<std::vector<char>> payloads;
  std::string stream;
  for (size_t i = 0; i < 6; ++i) {
    payloads.emplace_back(sizes[i]);
    fill_pattern(payloads[i], static_cast<unsigned>(i + 1));
    const bool eager = i != 4;
    wire::CtrlMsg rec{eager ? wire::kMsgEager : wire::kMsgHeader, tags[i], i, sizes[i]};
    stream.append(reinterpret_cast<const char*>(&rec), sizeof rec);
    if (eager) stream.append(payloads[i].data(), payloads[i].size());
  }
  // Receives for tags 1-3 posted first; tag 4, 5 and the second tag 1 only
  // after everything arrived (held meanwhile).
  std::vector<std::vector<char>> in(6, std::vector<char>(200, 'x'));
  std::vector<void*> reqs(6, nullptr);
  auto post = [&](size_t i) {
    void* buf = in[i].data();
    int size = 200, tag = tags[i];
    ASSERT_EQ(net->irecv(recv_comm, 1, &buf, &size, &tag, nullptr, &reqs[i]), ncclSuccess);
    ASSERT_NE(reqs[i], nullptr);
  };
  for (size_t i = 0; i < 3; ++i) post(i);
  // The first three messages one byte at a time, tested in between, so that
  // every record and payload is cut at every offset once.
  const size_t cut = 3 * sizeof(wire::CtrlMsg) + sizes[0] + sizes[1] + sizes[2];
  std::vector<int> got(6, -1);
  int done = 0;
  for (size_t b = 0; b < cut; ++b) {
    ASSERT_TRUE(ctrl.write_all(stream.data() + b, 1));
    ASSERT_EQ(done, 0) << "message 2 complete before its last byte was written";
    ASSERT_EQ(net->test(reqs[2], &done, &got[2]), ncclSuccess);
  }
  // The last byte may still be on its way; once it is in, message 2 is.
  if (done == 0) {
    ASSERT_EQ(wait_request(net, reqs[2], &got[2]), ncclSuccess);
  }
  // The rest in pieces of 10 bytes, so that a read ends inside a record
  // after a whole one (the part read ahead moves to the front); tested
  // through a receive no message matches.
  std::vector<char> none(8);
  void* probe = nullptr;
  {
    void* buf = none.data();
    int size = 8, tag = 99;
    ASSERT_EQ(net->irecv(recv_comm, 1, &buf, &size, &tag, nullptr, &probe), ncclSuccess);
  }
  for (size_t b = cut; b < stream.size(); b += 10) {
    ASSERT_TRUE(ctrl.write_all(stream.data() + b, std::min<size_t>(10, stream.size() - b)));
    ASSERT_EQ(net->test(probe, &done, nullptr), ncclSuccess);
    ASSERT_EQ(done, 0);
  }
  for (size_t i = 0; i < 3; ++i) {
    if (i < 2) {
      ASSERT_EQ(wait_request(net, reqs[i], &got[i]), ncclSuccess) << "message " << i;
    }
    EXPECT_EQ(got[i], static_cast<int>(sizes[i]));
    EXPECT_TRUE(std::equal(payloads[i].begin(), payloads[i].end(), in[i].begin()));
  }
  for (size_t i = 3; i < 6; ++i) post(i);
  wire::CtrlMsg cts{};
  ASSERT_TRUE(ctrl.read_all(&cts, sizeof cts));
  // Credits for the first eager messages may come back before the
  // clear-to-send; they are counted below.
  int credited = 0;
  while (cts.type == wire::kMsgCredit) {
    credited += static_cast<int>(cts.value);
    ASSERT_TRUE(ctrl.read_all(&cts, sizeof cts));
  }
  ASSERT_EQ(cts.type, wire::kMsgClearToSend);
  EXPECT_EQ(cts.id, 4u);
  EXPECT_EQ(cts.value, wire::kCtsAccept);
  ASSERT_TRUE(data.write_all(payloads[4].data(), payloads[4].size()));
  for (size_t i = 3; i < 6; ++i) {
    ASSERT_EQ(wait_request(net, reqs[i], &got[i]), ncclSuccess) << "message " << i;
    EXPECT_EQ(got[i], static_cast<int>(sizes[i]));
    EXPECT_TRUE(std::equal(payloads[i].begin(), payloads[i].end(), in[i].begin()));
  }
  // Five eager messages consumed, credits handed back in batches of 2 (a
  // quarter of the 8 granted): 4 of them so far.
  while (credited < 4) {
    wire::CtrlMsg rec{};
    ASSERT_TRUE(ctrl.read_all(&rec, sizeof rec));
    ASSERT_EQ(rec.type, wire::kMsgCredit);
    credited += static_cast<int>(rec.value);
  }
  EXPECT_EQ(credited, 4);
  EXPECT_EQ(net->closeRecv(recv_comm), ncclSuccess);
  EXPECT_EQ(net->closeListen(listen), ncclSuccess);
}

TEST_F(NetSocketEagerWire, ConnectorOffersAndFollowsTheGrant) {
  ASSERT_EQ(plugin().configure(1, 1, nullptr), ncclSuccess);
  for (bool grant : {false, true}) {
    SCOPED_TRACE(grant ? "peer grants 16 bytes, 2 credits" : "peer grants nothing");
    RawListener l;
    ASSERT_TRUE(l.open());
    void* send_comm = nullptr;
    auto deadline = Clock::now() + kWait;
    while (send_comm == nullptr && Clock::now() < deadline)
      ASSERT_EQ(net->connect(lo, l.handle, &send_comm), ncclSuccess);
    ASSERT_NE(send_comm, nullptr);
    std::vector<RawSocket> socks(2);
    for (int i = 0; i < 2; ++i) {
      RawSocket s(accept(l.sock.fd, nullptr, nullptr));
      wire::Hello hello{};
      ASSERT_TRUE(s.read_all(&hello, sizeof hello));
      ASSERT_EQ(hello.magic, RawListener::kMagic);
      // The offer: this build's eager limits.
      EXPECT_EQ(wire::hello_eager_max(hello), wire::kEagerMaxBytes);
      EXPECT_EQ(hello.eager_credits, wire::kEagerCredits);
      ASSERT_LT(hello.index, 2);
      socks[hello.index] = std::move(s);
    }
    RawSocket& ctrl = socks[0];
    RawSocket& data = socks[1];
    if (grant) {
      wire::CtrlMsg g{wire::kMsgEagerGrant, 0, 16, 2};
      ASSERT_TRUE(ctrl.write_all(&g, sizeof g));
    }
    // A 1-byte message: rendezvous. Once it completed, the sender has seen
    // whatever was granted (the grant precedes the clear-to-send).
    char one = '!';
    void* req = nullptr;
    ASSERT_EQ(net->isend(send_comm, &one, 1, 7, nullptr, &req), ncclSuccess);
    wire::CtrlMsg rec{};
    ASSERT_TRUE(ctrl.read_all(&rec, sizeof rec));
    wire::CtrlMsg cts{wire::kMsgClearToSend, 7, rec.id, wire::kCtsAccept};
    // Received into its own byte: `one` belongs to the plugin until the send
    // completes (its helper thread may still be inside send() on it).
    char got = 0;
    if (grant && rec.type == wire::kMsgEager) {
      ASSERT_TRUE(ctrl.read_all(&got, 1));  // the grant arrived first after all
    } else {
      ASSERT_EQ(rec.type, wire::kMsgHeader);
      ASSERT_TRUE(ctrl.write_all(&cts, sizeof cts));
      ASSERT_TRUE(data.read_all(&got, 1));
    }
    ASSERT_EQ(wait_request(net, req), ncclSuccess);
    EXPECT_EQ(got, '!');
    // Then, messages of 16 and 17 bytes, three of 16 in a row.
    std::vector<char> payload(17, 'p');
    const int sizes[] = {16, 17, 16, 16};
    // Granted: each message of at most 16 bytes goes eager while one of the
    // 2 credits is left (none come back here), everything else rendezvous.
    int credits = grant ? 2 - (rec.type == wire::kMsgEager ? 1 : 0) : 0;
    for (int size : sizes) {
      SCOPED_TRACE("size " + std::to_string(size));
      ASSERT_EQ(net->isend(send_comm, payload.data(), size, 7, nullptr, &req), ncclSuccess);
      ASSERT_TRUE(ctrl.read_all(&rec, sizeof rec));
      std::vector<char> got(size);
      if (size <= 16 && credits > 0) {
        --credits;
        ASSERT_EQ(rec.type, wire::kMsgEager);
        ASSERT_EQ(rec.value, static_cast<uint64_t>(size));
        ASSERT_TRUE(ctrl.read_all(got.data(), got.size()));
      } else {
        ASSERT_EQ(rec.type, wire::kMsgHeader);
        cts.id = rec.id;
        ASSERT_TRUE(ctrl.write_all(&cts, sizeof cts));
        ASSERT_TRUE(data.read_all(got.data(), got.size()));
      }
      EXPECT_EQ(got, std::vector<char>(payload.begin(), payload.begin() + size));
      ASSERT_EQ(wait_request(net, req), ncclSuccess);
    }
    // A credit handed back beyond what is out is a protocol error.
    if (grant) {
      size_t warnings = warning_count();
      wire::CtrlMsg bogus{wire::kMsgCredit, 0, 0, 5};
      ASSERT_TRUE(ctrl.write_all(&bogus, sizeof bogus));
      // Found by this isend (then it fails at once) or while its header waits.
      req = nullptr;
      ncclResult_t rc = net->isend(send_comm, payload.data(), 17, 7, nullptr, &req);
      if (rc == ncclSuccess && req != nullptr) rc = wait_request(net, req);
      EXPECT_EQ(rc, ncclInternalError);
      EXPECT_GT(warning_count(), warnings);
    }
    EXPECT_EQ(net->closeSend(send_comm), ncclSuccess);
  }
}

}  // namespace
}  // namespace nccom_test
