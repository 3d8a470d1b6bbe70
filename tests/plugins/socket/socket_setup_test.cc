// Loading, properties, configuration and connection setup (suite NetSocketSetup).
#include "build_paths.h"
#include "socket_fixture.h"

#include <elf.h>

#include <fstream>
#include <iterator>
#include <set>

namespace nccom_test {
namespace {

using NetSocketSetup = SocketTest;

// Names of the symbols the shared object defines in its dynamic symbol table.
std::set<std::string> exported_symbols(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::set<std::string> names;
  if (file.size() < sizeof(Elf64_Ehdr)) return names;
  auto* eh = reinterpret_cast<const Elf64_Ehdr*>(file.data());
  auto* sh = reinterpret_cast<const Elf64_Shdr*>(file.data() + eh->e_shoff);
  for (int i = 0; i < eh->e_shnum; ++i) {
    if (sh[i].sh_type != SHT_DYNSYM) continue;
    const char* strtab = file.data() + sh[sh[i].sh_link].sh_offset;
    auto* sym = reinterpret_cast<const Elf64_Sym*>(file.data() + sh[i].sh_offset);
    for (size_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym); ++k) {
      int bind = ELF64_ST_BIND(sym[k].st_info);
      if (sym[k].st_shndx != SHN_UNDEF &&
          (bind == STB_GLOBAL || bind == STB_WEAK || bind == STB_GNU_UNIQUE))
        names.insert(strtab + sym[k].st_name);
    }
  }
  return names;
}

TEST(NetSocketExports, OnlyTheTablesAndConfigureAreExported) {
  std::set<std::string> want = {"ncclNetPlugin_v4", "ncclNetPlugin_v5", "ncclNetPlugin_v6",
                                "nccomNetConfig"};
  EXPECT_EQ(exported_symbols(NCCOM_NET_SOCKET_PATH), want);
}

TEST(NetSocketExports, ThreeTablesAndConfigureOnly) {
  const SocketPlugin& p = plugin();
  ASSERT_NE(p.lib, nullptr) << dlerror();
  ASSERT_NE(p.v6, nullptr);
  ASSERT_NE(p.v5, nullptr);
  ASSERT_NE(p.v4, nullptr);
  EXPECT_STREQ(p.v6->name, "Socket");
  EXPECT_STREQ(p.v5->name, "Socket");
  EXPECT_STREQ(p.v4->name, "Socket");
  EXPECT_NE(p.configure, nullptr);
  // Internal functions stay hidden.
  EXPECT_EQ(dlsym(p.lib, "_ZN5nccom6socket13devices_init0Ev"), nullptr);
  EXPECT_EQ(dlsym(p.lib, "_ZN5nccom6socket12devices_initEv"), nullptr);
  // Every slot is filled.
  for (const void* const* slot = reinterpret_cast<const void* const*>(p.v6);
       slot < reinterpret_cast<const void* const*>(p.v6 + 1); ++slot)
    EXPECT_NE(*slot, nullptr);
}

TEST_F(NetSocketSetup, PropertiesDescribeAHostOnlyNetWithoutRma) {
  int ndev = 0;
  ASSERT_EQ(net->devices(&ndev), ncclSuccess);
  ASSERT_GE(ndev, 1);
  for (int d = 0; d < ndev; ++d) {
    ncclNetProperties_v6_t p;
    memset(&p, 0xab, sizeof p);
    ASSERT_EQ(net->getProperties(d, &p), ncclSuccess);
    ASSERT_NE(p.name, nullptr);
    EXPECT_GT(strlen(p.name), 0u);
    EXPECT_EQ(p.guid, static_cast<uint64_t>(d));
    EXPECT_EQ(p.ptrSupport, NCCL_PTR_HOST);
    EXPECT_EQ(p.regIsGlobal, 0);
    EXPECT_GT(p.speed, 0);
    EXPECT_EQ(p.latency, 0.0f);
    EXPECT_EQ(p.maxComms, 65536);
    EXPECT_EQ(p.maxRecvs, 1);
    EXPECT_EQ(p.max_write_inline_size, 0u);
    EXPECT_EQ(p.max_mr_key_size, 0u);
    EXPECT_EQ(p.rma_supported, 0);
    if (p.pciPath != nullptr) {
      EXPECT_EQ(strncmp(p.pciPath, "/sys/", 5), 0) << p.pciPath;
    }
    EXPECT_NE(strncmp(p.name, "docker", 6), 0);  // excluded by default
  }
  ncclNetProperties_v6_t loprops;
  ASSERT_EQ(net->getProperties(lo, &loprops), ncclSuccess);
  EXPECT_EQ(loprops.speed, 10000);  // the loopback has no sysfs speed: the fallback
  EXPECT_EQ(loprops.pciPath, nullptr);
  ncclNetProperties_v6_t p;
  EXPECT_EQ(net->getProperties(ndev, &p), ncclInvalidArgument);
  EXPECT_EQ(net->getProperties(-1, &p), ncclInvalidArgument);
  EXPECT_EQ(net->getProperties(0, nullptr), ncclInvalidArgument);

  ncclNetProperties_v4_t p4;
  ASSERT_EQ(plugin().v4->getProperties(lo, &p4), ncclSuccess);
  EXPECT_STREQ(p4.name, "lo");
  EXPECT_EQ(p4.guid, static_cast<uint64_t>(lo));
  EXPECT_EQ(p4.ptrSupport, NCCL_PTR_HOST);
  EXPECT_EQ(p4.speed, 10000);
  EXPECT_EQ(p4.maxComms, 65536);
}

TEST_F(NetSocketSetup, ConfigureSelectsInterfacesAndRejectsBadCounts) {
  const SocketPlugin& p = plugin();
  EXPECT_EQ(p.configure(-1, 1, nullptr), ncclInvalidArgument);
  EXPECT_EQ(p.configure(65, 1, nullptr), ncclInvalidArgument);
  EXPECT_EQ(p.configure(1, 17, nullptr), ncclInvalidArgument);
  EXPECT_EQ(p.configure(16, 8, nullptr), ncclInvalidArgument);  // 128 sockets > 64
  EXPECT_EQ(p.configure(8, 8, nullptr), ncclSuccess);

  ASSERT_EQ(p.configure(0, 0, "=lo"), ncclSuccess);
  ASSERT_EQ(net->fini(), ncclSuccess);
  ASSERT_EQ(net->init(test_logger), ncclSuccess);
  int ndev = 0;
  ASSERT_EQ(net->devices(&ndev), ncclSuccess);
  ASSERT_EQ(ndev, 1);
  ncclNetProperties_v6_t props;
  ASSERT_EQ(net->getProperties(0, &props), ncclSuccess);
  EXPECT_STREQ(props.name, "lo");

  // Excluding every interface: init fails (and says why) instead of offering nothing.
  ASSERT_EQ(p.configure(0, 0, "=no-such-interface"), ncclSuccess);
  ASSERT_EQ(net->fini(), ncclSuccess);
  size_t warnings = warning_count();
  EXPECT_EQ(net->init(test_logger), ncclInternalError);
  EXPECT_GT(warning_count(), warnings);
  EXPECT_EQ(net->devices(&ndev), ncclInternalError);

  ASSERT_EQ(p.configure(0, 0, nullptr), ncclSuccess);
  ASSERT_EQ(net->init(test_logger), ncclSuccess);  // init again after a failed one
  ASSERT_EQ(net->devices(&ndev), ncclSuccess);
  EXPECT_GE(ndev, 1);
}

TEST_F(NetSocketSetup, InitTwiceAndAfterFini) {
  EXPECT_EQ(net->init(test_logger), ncclSuccess);
  EXPECT_EQ(net->fini(), ncclSuccess);
  int ndev = 0;
  EXPECT_EQ(net->devices(&ndev), ncclInternalError);
  void* listen = nullptr;
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  EXPECT_EQ(net->listen(0, handle, &listen), ncclInternalError);
  EXPECT_EQ(net->init(nullptr), ncclSuccess);  // a NULL logger: nothing logged, nothing printed
  EXPECT_EQ(net->init(test_logger), ncclSuccess);
  EXPECT_EQ(net->devices(&ndev), ncclSuccess);
}

TEST_F(NetSocketSetup, NonBlockingConnectAcceptLoop) {
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* listen = nullptr;
  ASSERT_EQ(net->listen(lo, handle, &listen), ncclSuccess);
  ASSERT_NE(listen, nullptr);
  // Nothing is connecting yet: accept answers "not yet", without blocking.
  void* recv = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(net->accept(listen, &recv), ncclSuccess);
  EXPECT_EQ(recv, nullptr);

  // Three connections through one listener, polled interleaved.
  constexpr int kConns = 3;
  char handles[kConns][NCCL_NET_HANDLE_MAXSIZE];
  void* sends[kConns] = {};
  std::vector<void*> recvs;
  for (auto& h : handles) memcpy(h, handle, sizeof h);
  int connect_calls = 0;
  auto deadline = Clock::now() + kWait;
  while ((recvs.size() < kConns || sends[0] == nullptr || sends[1] == nullptr ||
          sends[2] == nullptr) &&
         Clock::now() < deadline) {
    for (int i = 0; i < kConns; ++i) {
      if (sends[i] != nullptr) continue;
      ASSERT_EQ(net->connect(lo, handles[i], &sends[i]), ncclSuccess);
      ++connect_calls;
    }
    void* r = nullptr;
    ASSERT_EQ(net->accept(listen, &r), ncclSuccess);
    if (r != nullptr) recvs.push_back(r);
  }
  ASSERT_EQ(recvs.size(), static_cast<size_t>(kConns));
  for (int i = 0; i < kConns; ++i) {
    ASSERT_NE(sends[i], nullptr);
    // The handle is reusable: connect left no in-progress token behind.
    EXPECT_EQ(memcmp(handles[i], handle, NCCL_NET_HANDLE_MAXSIZE), 0);
  }
  EXPECT_GE(connect_calls, kConns);
  for (void* s : sends) EXPECT_EQ(net->closeSend(s), ncclSuccess);
  for (void* r : recvs) EXPECT_EQ(net->closeRecv(r), ncclSuccess);
  EXPECT_EQ(net->closeListen(listen), ncclSuccess);
}

TEST_F(NetSocketSetup, BadHandlesAreRefused) {
  char garbage[NCCL_NET_HANDLE_MAXSIZE];
  for (size_t i = 0; i < sizeof garbage; ++i) garbage[i] = static_cast<char>(i * 37 + 11);
  void* send = nullptr;
  size_t warnings = warning_count();
  EXPECT_EQ(net->connect(lo, garbage, &send), ncclInvalidArgument);
  EXPECT_EQ(send, nullptr);
  EXPECT_GT(warning_count(), warnings);
  char zeros[NCCL_NET_HANDLE_MAXSIZE] = {};
  EXPECT_EQ(net->connect(lo, zeros, &send), ncclInvalidArgument);
  EXPECT_EQ(net->connect(lo, nullptr, &send), ncclInvalidArgument);
  EXPECT_EQ(net->listen(lo, nullptr, &send), ncclInvalidArgument);
  EXPECT_EQ(net->listen(12345, garbage, &send), ncclInvalidArgument);

  // A real handle whose connect token names nothing in progress.
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* listen = nullptr;
  ASSERT_EQ(net->listen(lo, handle, &listen), ncclSuccess);
  char forged[NCCL_NET_HANDLE_MAXSIZE];
  memcpy(forged, handle, sizeof forged);
  memset(forged + 40, 0x5a, 8);  // connect_token
  EXPECT_EQ(net->connect(lo, forged, &send), ncclInvalidArgument);
  EXPECT_EQ(net->connect(-1, handle, &send), ncclInvalidArgument);
  EXPECT_EQ(net->closeListen(listen), ncclSuccess);

  // Comms of the wrong kind or no comm at all.
  EXPECT_EQ(net->accept(nullptr, &send), ncclInvalidArgument);
  EXPECT_EQ(net->closeSend(nullptr), ncclInvalidArgument);
  EXPECT_EQ(net->closeRecv(garbage), ncclInvalidArgument);
  EXPECT_EQ(net->closeListen(garbage), ncclInvalidArgument);
  int done = 0;
  EXPECT_EQ(net->test(nullptr, &done, nullptr), ncclInvalidArgument);
  EXPECT_EQ(net->test(garbage, &done, nullptr), ncclInvalidArgument);
}

TEST_F(NetSocketSetup, WrongMagicIsRefusedByTheListener) {
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* listen = nullptr;
  ASSERT_EQ(net->listen(lo, handle, &listen), ncclSuccess);
  char forged[NCCL_NET_HANDLE_MAXSIZE];
  memcpy(forged, handle, sizeof forged);
  forged[32] ^= 0x01;  // magic
  size_t warnings = warning_count();
  void* intruder = nullptr;
  ncclResult_t rc = ncclSuccess;
  auto deadline = Clock::now() + kWait;
  while (intruder == nullptr && rc == ncclSuccess && Clock::now() < deadline)
    rc = net->connect(lo, forged, &intruder);
  // Accept never hands the intruder out; the rightful peer still gets in.
  Endpoints good;
  good.listen = listen;
  void* recv = nullptr;
  deadline = Clock::now() + kWait;
  while ((good.send == nullptr || recv == nullptr) && Clock::now() < deadline) {
    if (good.send == nullptr) {
      ASSERT_EQ(net->connect(lo, handle, &good.send), ncclSuccess);
    }
    if (recv == nullptr) {
      ASSERT_EQ(net->accept(listen, &recv), ncclSuccess);
    }
  }
  good.recv = recv;
  ASSERT_NE(good.recv, nullptr);
  void* extra = nullptr;
  EXPECT_EQ(net->accept(listen, &extra), ncclSuccess);
  EXPECT_EQ(extra, nullptr);
  if (rc == ncclSuccess && intruder != nullptr) {
    EXPECT_GT(warning_count(), warnings);  // the listener said why it closed the sockets
    // The intruder's comm fails instead of hanging.
    char byte = 1;
    void* req = nullptr;
    ncclResult_t st = net->isend(intruder, &byte, 1, 0, nullptr, &req);
    if (st == ncclSuccess && req != nullptr) st = wait_request(net, req);
    EXPECT_TRUE(st == ncclRemoteError || st == ncclSystemError) << st;
    EXPECT_EQ(net->closeSend(intruder), ncclSuccess);
  }
  close_pair(net, good);
}

TEST_F(NetSocketSetup, RegistrationIsHostOnlyAndRmaIsUnsupported) {
  Endpoints e = connect_pair(net, lo);
  char buf[64];
  void* mr = nullptr;
  EXPECT_EQ(net->regMr(e.send, buf, sizeof buf, NCCL_PTR_HOST, &mr), ncclSuccess);
  EXPECT_NE(mr, nullptr);
  void* dev_mr = nullptr;
  EXPECT_EQ(net->regMr(e.recv, buf, sizeof buf, NCCL_PTR_NEURON, &dev_mr), ncclInvalidArgument);
  EXPECT_EQ(dev_mr, nullptr);
  EXPECT_EQ(net->regMr(e.listen, buf, sizeof buf, NCCL_PTR_HOST, &dev_mr), ncclInvalidArgument);
  EXPECT_EQ(net->regMrDmaBuf(e.recv, buf, sizeof buf, NCCL_PTR_NEURON, 0, -1, &dev_mr),
            ncclInvalidUsage);
  uint64_t key = 0;
  void* req = nullptr;
  EXPECT_EQ(net->getMrKey(mr, &key), ncclInvalidUsage);
  EXPECT_EQ(net->iwrite(e.send, buf, 8, mr, 0, 0, &req), ncclInvalidUsage);
  EXPECT_EQ(net->iwriteInline(e.send, buf, 8, 0, 0, &req), ncclInvalidUsage);
  EXPECT_EQ(net->iread(e.recv, buf, 8, mr, 0, 0, &req), ncclInvalidUsage);
  EXPECT_EQ(req, nullptr);
  // A registered buffer can be sent; a bogus mhandle is refused.
  EXPECT_EQ(net->isend(e.send, buf, 8, 0, buf, &req), ncclInvalidArgument);
  EXPECT_EQ(net->deregMr(e.send, mr), ncclSuccess);
  EXPECT_EQ(net->deregMr(e.send, buf), ncclInvalidArgument);
  EXPECT_EQ(net->deregMr(e.send, nullptr), ncclInvalidArgument);
  close_pair(net, e);
}

TEST_F(NetSocketSetup, V5TableConnectsAndMovesData) {
  const ncclNet_v5_t* v5 = plugin().v5;
  Endpoints e = connect_pair(v5, lo);
  ASSERT_NE(e.send, nullptr);
  std::vector<char> out(10000), in(10000);
  fill_pattern(out, 5);
  void *sreq = nullptr, *rreq = nullptr;
  void* data = in.data();
  int size = static_cast<int>(in.size()), tag = 9;
  ASSERT_EQ(v5->irecv(e.recv, 1, &data, &size, &tag, nullptr, &rreq), ncclSuccess);
  ASSERT_EQ(v5->isend(e.send, out.data(), size, tag, nullptr, &sreq), ncclSuccess);
  ASSERT_NE(sreq, nullptr);
  ASSERT_NE(rreq, nullptr);
  int ssize = -1, rsize = -1;
  EXPECT_EQ(wait_request(v5, sreq, &ssize), ncclSuccess);
  EXPECT_EQ(wait_request(v5, rreq, &rsize), ncclSuccess);
  EXPECT_EQ(ssize, 10000);
  EXPECT_EQ(rsize, 10000);
  EXPECT_EQ(in, out);
  close_pair(v5, e);
}

TEST_F(NetSocketSetup, V4TableBlockingConnectAcceptAndData) {
  const ncclNet_v4_t* v4 = plugin().v4;
  ASSERT_EQ(v4->init(test_logger), ncclSuccess);
  char handle[NCCL_NET_HANDLE_MAXSIZE_V4 + 8];
  memset(handle, 0xee, sizeof handle);
  void* listen = nullptr;
  ASSERT_EQ(v4->listen(lo, handle, &listen), ncclSuccess);
  // listen writes no more than a v4 handle.
  EXPECT_EQ(static_cast<unsigned char>(handle[NCCL_NET_HANDLE_MAXSIZE_V4]), 0xeeu);
  void* recv = nullptr;
  ncclResult_t accept_rc = ncclInternalError;
  std::thread acceptor([&] { accept_rc = v4->accept(listen, &recv); });
  void* send = nullptr;
  EXPECT_EQ(v4->connect(lo, handle, &send), ncclSuccess);  // blocks until connected
  acceptor.join();
  ASSERT_EQ(accept_rc, ncclSuccess);
  ASSERT_NE(send, nullptr);
  ASSERT_NE(recv, nullptr);

  std::vector<char> out(300000), in(300000);
  fill_pattern(out, 4);
  void *sreq = nullptr, *rreq = nullptr;
  ASSERT_EQ(v4->irecv(recv, in.data(), static_cast<int>(in.size()), nullptr, &rreq), ncclSuccess);
  ASSERT_EQ(v4->isend(send, out.data(), static_cast<int>(out.size()), nullptr, &sreq), ncclSuccess);
  int rsize = -1;
  EXPECT_EQ(wait_request(v4, sreq), ncclSuccess);
  EXPECT_EQ(wait_request(v4, rreq, &rsize), ncclSuccess);
  EXPECT_EQ(rsize, 300000);
  EXPECT_EQ(in, out);
  void* freq = nullptr;
  ASSERT_EQ(v4->iflush(recv, in.data(), rsize, nullptr, &freq), ncclSuccess);
  EXPECT_EQ(wait_request(v4, freq), ncclSuccess);
  EXPECT_EQ(v4->closeSend(send), ncclSuccess);
  EXPECT_EQ(v4->closeRecv(recv), ncclSuccess);
  EXPECT_EQ(v4->closeListen(listen), ncclSuccess);
}

}  // namespace
}  // namespace nccom_test
