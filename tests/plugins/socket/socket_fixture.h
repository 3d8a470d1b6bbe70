// Shared test support for the socket net plugin: loads the built plugin with
// dlopen (as a host would), captures its log, and connects endpoint pairs
// over the loopback through any of its tables.
#pragma once

#include "build_paths.h"
#include "child_process.h"
#include "net_config_call.h"
#include "socket_wire.h"

#include <nccom/net_v4.h>
#include <nccom/net_v5.h>
#include <nccom/net_v6.h>

#include <dirent.h>
#include <dlfcn.h>
#include <net/if.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace nccom_test {

// The plugin's configure() through nccomNetConfig, as the host calls it:
// a count of 0 and a NULL filter leave that setting to the plugin's default.
using ConfigureFn =
    std::function<ncclResult_t(int nsocks_per_thread, int nthreads, const char* ifnames)>;

struct SocketPlugin {
  void* lib = nullptr;
  const ncclNet_v6_t* v6 = nullptr;
  const ncclNet_v5_t* v5 = nullptr;
  const ncclNet_v4_t* v4 = nullptr;
  ConfigureFn configure = nullptr;
};

// Loaded once per process, never unloaded.
inline const SocketPlugin& plugin() {
  static SocketPlugin p = [] {
    SocketPlugin s;
    s.lib = dlopen(NCCOM_NET_SOCKET_PATH, RTLD_NOW | RTLD_LOCAL);
    if (s.lib == nullptr) return s;
    s.v6 = static_cast<const ncclNet_v6_t*>(dlsym(s.lib, "ncclNetPlugin_v6"));
    s.v5 = static_cast<const ncclNet_v5_t*>(dlsym(s.lib, "ncclNetPlugin_v5"));
    s.v4 = static_cast<const ncclNet_v4_t*>(dlsym(s.lib, "ncclNetPlugin_v4"));
    NetConfigCall call(s.lib);
    if (call.valid()) {
      s.configure = [call](int nspt, int nthr, const char* ifnames) {
        std::map<std::string, std::string> values;
        if (nspt != 0) values["nsocks_per_thread"] = std::to_string(nspt);
        if (nthr != 0) values["nthreads"] = std::to_string(nthr);
        if (ifnames != nullptr) values["bootstrap.socket_ifname"] = ifnames;
        return call(values);
      };
    }
    return s;
  }();
  return p;
}

// Everything the plugin logs, kept for assertions.
struct LogCapture {
  std::mutex mutex;
  std::vector<std::string> warnings;
  std::vector<std::string> infos;
  int messages = 0;
};
inline LogCapture& log_capture() {
  static LogCapture c;
  return c;
}
inline void test_logger(ncclDebugLogLevel level, unsigned long, const char*, int, const char* fmt,
                        ...) {
  char text[1024] = "";
  if (fmt != nullptr) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(text, sizeof text, fmt, args);
    va_end(args);
  }
  LogCapture& c = log_capture();
  std::lock_guard<std::mutex> lock(c.mutex);
  ++c.messages;
  if (level == NCCL_LOG_WARN) c.warnings.emplace_back(text);
  if (level == NCCL_LOG_INFO) c.infos.emplace_back(text);
}
// The INFO lines logged since `from` (an earlier infos.size()) that contain `part`.
inline std::vector<std::string> infos_containing(size_t from, const std::string& part) {
  std::lock_guard<std::mutex> lock(log_capture().mutex);
  std::vector<std::string> found;
  const auto& infos = log_capture().infos;
  for (size_t i = from; i < infos.size(); ++i)
    if (infos[i].find(part) != std::string::npos) found.push_back(infos[i]);
  return found;
}
inline size_t info_count() {
  std::lock_guard<std::mutex> lock(log_capture().mutex);
  return log_capture().infos.size();
}
inline size_t warning_count() {
  std::lock_guard<std::mutex> lock(log_capture().mutex);
  return log_capture().warnings.size();
}

inline int open_fds() { return nccom_test::open_fd_count(); }
inline int live_threads() { return nccom_test::thread_count(); }

using Clock = std::chrono::steady_clock;
inline constexpr auto kWait = std::chrono::seconds(20);
// A message size that always goes rendezvous, whether or not the eager grant
// has arrived yet.
inline constexpr int kRendezvousBytes = static_cast<int>(nccom::socket::kEagerMaxBytes) + 1;

struct Endpoints {
  void* listen = nullptr;
  void* send = nullptr;
  void* recv = nullptr;
};

// Non-blocking listen/connect/accept loop through a v5 or v6 table.
template <typename Net>
Endpoints connect_pair(const Net* net, int dev) {
  Endpoints e;
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  EXPECT_EQ(net->listen(dev, handle, &e.listen), ncclSuccess);
  auto deadline = Clock::now() + kWait;
  while ((e.send == nullptr || e.recv == nullptr) && Clock::now() < deadline) {
    if (e.send == nullptr) {
      EXPECT_EQ(net->connect(dev, handle, &e.send), ncclSuccess);
    }
    if (e.recv == nullptr) {
      EXPECT_EQ(net->accept(e.listen, &e.recv), ncclSuccess);
    }
  }
  EXPECT_NE(e.send, nullptr);
  EXPECT_NE(e.recv, nullptr);
  return e;
}

template <typename Net>
void close_pair(const Net* net, Endpoints& e) {
  if (e.send != nullptr) {
    EXPECT_EQ(net->closeSend(e.send), ncclSuccess);
  }
  if (e.recv != nullptr) {
    EXPECT_EQ(net->closeRecv(e.recv), ncclSuccess);
  }
  if (e.listen != nullptr) {
    EXPECT_EQ(net->closeListen(e.listen), ncclSuccess);
  }
  e = Endpoints{};
}

// Tests `request` until it completes or fails (or kWait passes: a hang).
// Returns test()'s result; *size gets the reported byte count.
template <typename Net>
ncclResult_t wait_request(const Net* net, void* request, int* size = nullptr) {
  auto deadline = Clock::now() + kWait;
  int done = 0;
  int reported = -1;
  while (Clock::now() < deadline) {
    ncclResult_t rc = net->test(request, &done, &reported);
    if (rc != ncclSuccess) return rc;
    if (done) {
      if (size != nullptr) *size = reported;
      return ncclSuccess;
    }
    std::this_thread::yield();  // the helper threads need the CPU more than we do
  }
  ADD_FAILURE() << "request " << request << " did not complete within " << kWait.count() << " s";
  return ncclInternalError;
}

inline void fill_pattern(std::vector<char>& buf, unsigned seed) {
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<char>((i * 131 + seed * 7919) >> 3);
}

// Posts one receive of all of `buf` with `tag`; the request (never NULL).
template <typename Net>
void* post_recv(const Net* net, void* comm, std::vector<char>& buf, int tag = 0) {
  void* req = nullptr;
  void* data = buf.data();
  int size = static_cast<int>(buf.size());
  EXPECT_EQ(net->irecv(comm, 1, &data, &size, &tag, nullptr, &req), ncclSuccess);
  EXPECT_NE(req, nullptr);
  return req;
}

// `count` messages, message i of size_of(i) bytes filled with fill_pattern(i).
template <typename SizeOf>
std::vector<std::vector<char>> patterned_messages(int count, SizeOf size_of) {
  std::vector<std::vector<char>> out(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    out[static_cast<size_t>(i)].resize(size_of(i));
    fill_pattern(out[static_cast<size_t>(i)], static_cast<unsigned>(i));
  }
  return out;
}

// A thread that sends `out` in order on `send_comm`, message i with tag
// i % 3, `window` requests in flight at most (each waited for).
template <typename Net>
std::thread send_windowed(const Net* net, void* send_comm,
                          const std::vector<std::vector<char>>& out, size_t window) {
  return std::thread([net, send_comm, &out, window] {
    std::vector<void*> pending;
    for (size_t i = 0; i < out.size(); ++i) {
      void* req = nullptr;
      while (req == nullptr)
        ASSERT_EQ(
            net->isend(send_comm, const_cast<char*>(out[i].data()), static_cast<int>(out[i].size()),
                       static_cast<int>(i % 3), nullptr, &req),
            ncclSuccess);
      pending.push_back(req);
      if (pending.size() == window) {
        for (void* r : pending) ASSERT_EQ(wait_request(net, r), ncclSuccess);
        pending.clear();
      }
    }
    for (void* r : pending) ASSERT_EQ(wait_request(net, r), ncclSuccess);
  });
}

// Fixture: the plugin initialised with the capturing logger, loopback found
// (a plugin that does not list lo fails the test).
class SocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const SocketPlugin& p = plugin();
    ASSERT_NE(p.lib, nullptr) << dlerror();
    ASSERT_NE(p.v6, nullptr);
    ASSERT_NE(p.configure, nullptr);
    net = p.v6;
    ASSERT_EQ(net->init(test_logger), ncclSuccess);
    int ndev = 0;
    ASSERT_EQ(net->devices(&ndev), ncclSuccess);
    for (int d = 0; d < ndev; ++d) {
      ncclNetProperties_v6_t props;
      ASSERT_EQ(net->getProperties(d, &props), ncclSuccess);
      if (strcmp(props.name, "lo") == 0) lo = d;
    }
    // Every machine has lo; a plugin that does not list it is broken.
    ASSERT_GE(lo, 0) << "the plugin lists no device \"lo\" among its " << ndev
                     << " (the kernel's lo has index " << if_nametoindex("lo") << ")";
  }
  void TearDown() override {
    EXPECT_EQ(plugin().configure(0, 0, nullptr), ncclSuccess);
    EXPECT_EQ(net->fini(), ncclSuccess);
  }

  const ncclNet_v6_t* net = nullptr;
  int lo = -1;
};

}  // namespace nccom_test
