// Runs one scenario of the neuronNet* exports in a fresh process (the net
// plugin is selected once per process) and prints key=value lines. The
// plugin comes from the environment the test sets (NCCL_NET_PLUGIN, ...).
//   net_host_exports_driver <exchange|adapted|nulls|none> <plugin path>
#include <nccom/net_handle.h>
#include <nccom/nrt_abi.h>

#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "plugins/loopback.h"
}

namespace {

std::string g_plugin;  // the plugin file, to read its counters

void report(const char* key, long value) { std::printf("%s=%ld\n", key, value); }

lb_stats_t* stats() {
  void* handle = dlopen(g_plugin.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return nullptr;
  auto* s = static_cast<lb_stats_t*>(dlsym(handle, "loopback_stats"));
  dlclose(handle);
  return s;
}

struct Comms {
  void *listen = nullptr, *send = nullptr, *recv = nullptr;
};

// Polls for up to 10 s: a real plugin (the socket one) completes from its
// own threads.
bool wait(void* request, int* size) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int done = 0;
  while (!done && std::chrono::steady_clock::now() < deadline) {
    if (neuronNetTest(request, &done, size) != NRT_SUCCESS) return false;
  }
  return done != 0;
}

Comms connect_all() {
  Comms c;
  unsigned char handle[128] = {};
  report("lazy_listen", neuronNetListen(0, handle, &c.listen));  // selects the plugin
  NRT_STATUS s = NRT_SUCCESS;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (c.send == nullptr && s == NRT_SUCCESS && std::chrono::steady_clock::now() < deadline)
    s = neuronNetConnect(0, handle, &c.send);
  report("connect", s == NRT_SUCCESS && c.send != nullptr ? 0 : 1);
  s = NRT_SUCCESS;
  while (c.recv == nullptr && s == NRT_SUCCESS && std::chrono::steady_clock::now() < deadline)
    s = neuronNetAccept(c.listen, &c.recv);
  report("accept", s == NRT_SUCCESS && c.recv != nullptr ? 0 : 1);
  return c;
}

bool exchange(const Comms& c, int size) {
  std::vector<unsigned char> out(static_cast<std::size_t>(size) + 1, 0x3c), in(out.size(), 0);
  void *smr = nullptr, *rmr = nullptr, *sreq = nullptr, *rreq = nullptr;
  if (neuronNetRegMrOG(c.send, out.data(), out.size(), NCCL_PTR_HOST, &smr) != NRT_SUCCESS ||
      neuronNetRegMrOG(c.recv, in.data(), in.size(), NCCL_PTR_HOST, &rmr) != NRT_SUCCESS ||
      neuronNetIsend(c.send, out.data(), size, smr, &sreq) != NRT_SUCCESS ||
      neuronNetIrecv(c.recv, in.data(), static_cast<int>(in.size()), rmr, &rreq) != NRT_SUCCESS)
    return false;
  int sent = -1, received = -1;
  if (!wait(sreq, &sent) || !wait(rreq, &received) || received != size) return false;
  if (std::memcmp(in.data(), out.data(), static_cast<std::size_t>(size)) != 0) return false;
  return neuronNetDeregMrOG(c.send, smr) == NRT_SUCCESS &&
         neuronNetDeregMrOG(c.recv, rmr) == NRT_SUCCESS;
}

void close_all(const Comms& c) {
  report("close_send", neuronNetCloseSend(c.send));
  report("close_recv", neuronNetCloseRecv(c.recv));
  report("close_listen", neuronNetCloseListen(c.listen));
}

void data_path() {
  const Comms c = connect_all();
  for (int size : {0, 1, 4096}) {
    report(("exchange_" + std::to_string(size)).c_str(), exchange(c, size) ? 0 : 1);
  }
  char byte = 0;
  void* request = nullptr;
  const NRT_STATUS flushed = neuronNetIflush(c.recv, &byte, 1, nullptr, &request);
  report("iflush", flushed == NRT_SUCCESS && wait(request, nullptr) ? 0 : 1);
  uint64_t key = 0;
  void* mhandle = nullptr;
  if (neuronNetRegMrOG(c.send, &byte, 1, NCCL_PTR_HOST, &mhandle) == NRT_SUCCESS) {
    report("get_mr_key", neuronNetGetMrKey(mhandle, &key));  // no RMA: unsupported
    neuronNetDeregMrOG(c.send, mhandle);
  }
  unsigned char bad[128] = {1, 2, 3};
  void* comm = nullptr;
  report("bad_handle", neuronNetConnect(0, bad, &comm));  // plugin: ncclInvalidArgument
  close_all(c);
}

// What a runtime does with neuronGetOFIHandle's answer: tells which plugin is
// behind it (net_handle.h) and moves a message through its v6 slots.
void through_table(const ncclNet_v6_t* net) {
  // "Inside libnccom": in the file that holds neuronGetOFIHandle (here the
  // driver itself, which links the exports in).
  Dl_info where{}, exports{};
  const bool in_libnccom = dladdr(net, &where) != 0 && where.dli_fname != nullptr &&
                           dladdr(reinterpret_cast<void*>(&neuronGetOFIHandle), &exports) != 0 &&
                           exports.dli_fname != nullptr &&
                           std::strcmp(where.dli_fname, exports.dli_fname) == 0;
  const auto* adapted = reinterpret_cast<const nccom_adapted_net_t*>(net);
  const bool wrapped = in_libnccom && std::memcmp(adapted->magic, NCCOM_ADAPTED_NET_MAGIC, 8) == 0;
  report("ofi_handle_adapted", wrapped);
  if (wrapped) {
    report("ofi_handle_version", adapted->version);
    report("ofi_handle_layout_neuron", std::strcmp(adapted->layout, "Neuron") == 0);
    char file[4096] = {}, plugin[4096] = {};
    report("ofi_handle_file_is_plugin", realpath(adapted->file, file) != nullptr &&
                                            realpath(g_plugin.c_str(), plugin) != nullptr &&
                                            std::strcmp(file, plugin) == 0);
    report("ofi_handle_init_is_noop", net->init(nullptr) == ncclSuccess);
  }
  int n = 0;
  report("table_devices", net->devices(&n) == ncclSuccess ? n : -1);
  unsigned char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void *listen = nullptr, *send = nullptr, *recv = nullptr;
  if (net->listen(0, handle, &listen) != ncclSuccess) return report("table_exchange", 1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while ((send == nullptr || recv == nullptr) && std::chrono::steady_clock::now() < deadline) {
    if (send == nullptr && net->connect(0, handle, &send) != ncclSuccess) break;
    if (recv == nullptr && net->accept(listen, &recv) != ncclSuccess) break;
  }
  char out[5] = "v6ok", in[5] = {};
  void *smr = nullptr, *rmr = nullptr, *sreq = nullptr, *rreq = nullptr;
  int size = 4, tag = 0, done_s = 0, done_r = 0, got = -1;
  void* data = in;
  bool ok = send != nullptr && recv != nullptr &&
            net->regMr(send, out, 4, NCCL_PTR_HOST, &smr) == ncclSuccess &&
            net->regMr(recv, in, 4, NCCL_PTR_HOST, &rmr) == ncclSuccess;
  // A NULL request is "cannot post now": posted again until the deadline.
  while (ok && rreq == nullptr && std::chrono::steady_clock::now() < deadline)
    ok = net->irecv(recv, 1, &data, &size, &tag, &rmr, &rreq) == ncclSuccess;
  while (ok && sreq == nullptr && std::chrono::steady_clock::now() < deadline)
    ok = net->isend(send, out, 4, 0, smr, &sreq) == ncclSuccess;
  ok = ok && sreq != nullptr && rreq != nullptr;
  while (ok && (!done_s || !done_r) && std::chrono::steady_clock::now() < deadline) {
    if (!done_s) ok = net->test(sreq, &done_s, nullptr) == ncclSuccess;
    if (ok && !done_r) ok = net->test(rreq, &done_r, &got) == ncclSuccess;
  }
  // Which step failed, for the test's message.
  const char* failed_at = send == nullptr                      ? "connect"
                          : recv == nullptr                    ? "accept"
                          : sreq == nullptr || rreq == nullptr ? "post"
                          : !ok                                ? "test"
                          : !(done_s && done_r)                ? "deadline"
                                                               : "data";
  ok = ok && done_s && done_r && got == 4 && std::memcmp(in, out, 4) == 0;
  if (!ok) std::printf("table_exchange_failed_at=%s\n", failed_at);
  if (smr != nullptr) net->deregMr(send, smr);
  if (rmr != nullptr) net->deregMr(recv, rmr);
  if (send != nullptr) net->closeSend(send);
  if (recv != nullptr) net->closeRecv(recv);
  net->closeListen(listen);
  report("table_exchange", ok ? 0 : 1);
}

void init_and_fini() {
  char root[] = "";
  report("init_net", neuronInitNet(root));
  report("init_net_again", neuronInitNet(nullptr));
  void* table = nullptr;
  report("ofi_handle", neuronGetOFIHandle(&table));
  void* plugin = dlopen(g_plugin.c_str(), RTLD_NOW | RTLD_NOLOAD);
  report("ofi_handle_is_table",
         plugin != nullptr && table != nullptr && table == dlsym(plugin, "ncclNetPlugin_v6"));
  if (plugin != nullptr) dlclose(plugin);
  if (table != nullptr) through_table(static_cast<const ncclNet_v6_t*>(table));
  lb_stats_t* s = stats();
  report("init_calls", s ? s->init_calls : -1);
  report("fini", neuronFiniPlugin());
  report("fini_again", neuronFiniPlugin());
  report("fini_calls", s ? s->fini_calls : -1);
  unsigned char handle[128] = {};
  void* listen = nullptr;
  report("after_fini", neuronNetListen(0, handle, &listen));
  report("init_after_fini", neuronInitNet(nullptr));
}

void nulls() {
  unsigned char handle[128] = {};
  void* p = nullptr;
  int done = 0;
  uint64_t key = 0;
  const NRT_STATUS all[] = {neuronGetOFIHandle(nullptr),
                            neuronNetListen(0, nullptr, &p),
                            neuronNetListen(0, handle, nullptr),
                            neuronNetConnect(0, nullptr, &p),
                            neuronNetConnect(0, handle, nullptr),
                            neuronNetAccept(nullptr, &p),
                            neuronNetAccept(&p, nullptr),
                            neuronNetRegMrOG(nullptr, handle, 1, 1, &p),
                            neuronNetRegMrOG(&p, handle, 1, 1, nullptr),
                            neuronNetDeregMrOG(nullptr, &p),
                            neuronNetGetMrKey(nullptr, &key),
                            neuronNetGetMrKey(&p, nullptr),
                            neuronNetIsend(nullptr, handle, 1, nullptr, &p),
                            neuronNetIsend(&p, handle, 1, nullptr, nullptr),
                            neuronNetIrecv(nullptr, handle, 1, nullptr, &p),
                            neuronNetIrecv(&p, handle, 1, nullptr, nullptr),
                            neuronNetIflush(nullptr, handle, 1, nullptr, &p),
                            neuronNetIflush(&p, handle, 1, nullptr, nullptr),
                            neuronNetTest(nullptr, &done, nullptr),
                            neuronNetTest(&p, nullptr, nullptr),
                            neuronNetCloseSend(nullptr),
                            neuronNetCloseRecv(nullptr),
                            neuronNetCloseListen(nullptr)};
  long invalid = 0;
  for (NRT_STATUS s : all) invalid += s == NRT_INVALID;
  report("nulls", static_cast<long>(sizeof all / sizeof all[0]));
  report("nulls_invalid", invalid);
  report("selected", stats() != nullptr);  // nothing was loaded for them
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s <exchange|adapted|nulls|none> <plugin path>\n", argv[0]);
    return 2;
  }
  const std::string scenario = argv[1];
  g_plugin = argv[2];
  if (scenario == "exchange" || scenario == "adapted") {
    data_path();
    init_and_fini();
  } else if (scenario == "nulls") {
    nulls();
  } else if (scenario == "none") {
    report("init_net", neuronInitNet(nullptr));
    unsigned char handle[128] = {};
    void* listen = nullptr;
    report("listen", neuronNetListen(0, handle, &listen));
    report("fini", neuronFiniPlugin());
  } else {
    return 2;
  }
  std::fflush(stdout);
  return 0;
}
