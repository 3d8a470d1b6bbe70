// Shared by the NetHost* suites: where the test plugins are, the loopback's
// counters, a captured log, and a bounded send/recv exchange through Net.
#pragma once

#include "log/log.h"
#include "net/bind.h"

#include <dlfcn.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern "C" {
#include "build_paths.h"
#include "plugins/loopback.h"
}

namespace nccom::net {
// Readable parameter names in test output.
inline void PrintTo(Layout layout, std::ostream* os) { *os << to_string(layout); }
}  // namespace nccom::net

namespace nccom::net::testing {

inline std::string plugin_path(const std::string& stem) {
  return std::string(NET_HOST_PLUGIN_DIR) + "/lib" + stem + ".so";
}

// The counters of a loaded test plugin (nullptr when it is not loaded).
inline lb_stats_t* stats_of(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return nullptr;
  auto* stats = static_cast<lb_stats_t*>(dlsym(handle, "loopback_stats"));
  dlclose(handle);  // drops only our reference; whoever loaded it keeps it
  return stats;
}

// Logs at INFO (all subsystems) into a fresh file for the test's lifetime.
class LogCapture {
 public:
  LogCapture() {
    char pattern[] = "/tmp/nccom-nethost-XXXXXX";
    dir_ = mkdtemp(pattern);
    path_ = dir_ + "/log";
    auto settings = log::parse_settings("INFO", "ALL", path_);
    EXPECT_TRUE(settings.ok());
    EXPECT_TRUE(log::configure(*settings).ok());
  }
  ~LogCapture() {
    log::reset();
    std::remove(path_.c_str());
    rmdir(dir_.c_str());
  }
  std::string text() const {
    std::ifstream in(path_);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  bool has(const std::string& needle) const { return text().find(needle) != std::string::npos; }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_, path_;
};

constexpr int kPolls = 1000;  // every retry loop is bounded

struct Endpoints {
  void* listen = nullptr;
  void* send = nullptr;
  void* recv = nullptr;
};

// listen, then connect and accept, retrying "not yet" answers (bounded).
inline ::testing::AssertionResult connect_endpoints(Net& net, Endpoints* e) {
  unsigned char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  if (net.listen(0, handle, &e->listen) != ncclSuccess || e->listen == nullptr)
    return ::testing::AssertionFailure() << "listen failed";
  for (int i = 0; i < kPolls && e->send == nullptr; ++i) {
    if (net.connect(0, handle, &e->send) != ncclSuccess)
      return ::testing::AssertionFailure() << "connect failed";
  }
  for (int i = 0; i < kPolls && e->recv == nullptr; ++i) {
    if (net.accept(e->listen, &e->recv) != ncclSuccess)
      return ::testing::AssertionFailure() << "accept failed";
  }
  if (e->send == nullptr || e->recv == nullptr)
    return ::testing::AssertionFailure() << "no connection after " << kPolls << " polls";
  return ::testing::AssertionSuccess();
}

inline void close_endpoints(Net& net, Endpoints& e) {
  EXPECT_EQ(net.close_send(e.send), ncclSuccess);
  EXPECT_EQ(net.close_recv(e.recv), ncclSuccess);
  EXPECT_EQ(net.close_listen(e.listen), ncclSuccess);
}

inline ::testing::AssertionResult wait_done(Net& net, void* request, int* size) {
  int done = 0;
  for (int i = 0; i < kPolls && !done; ++i) {
    if (net.test(request, &done, size) != ncclSuccess)
      return ::testing::AssertionFailure() << "test failed";
  }
  return done ? ::testing::AssertionSuccess() : ::testing::AssertionFailure() << "never done";
}

// One message of `size` bytes from e.send to e.recv, registered, checked.
inline ::testing::AssertionResult exchange(Net& net, Endpoints& e, int size) {
  std::vector<unsigned char> out(static_cast<std::size_t>(size) + 1), in(out.size(), 0);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<unsigned char>(i * 7 + 1);
  void *send_mr = nullptr, *recv_mr = nullptr;
  if (net.reg_mr(e.send, out.data(), out.size(), NCCL_PTR_HOST, &send_mr) != ncclSuccess ||
      net.reg_mr(e.recv, in.data(), in.size(), NCCL_PTR_HOST, &recv_mr) != ncclSuccess)
    return ::testing::AssertionFailure() << "regMr failed";
  void *send_req = nullptr, *recv_req = nullptr;
  for (int i = 0; i < kPolls && send_req == nullptr; ++i) {
    if (net.isend(e.send, out.data(), size, 0, send_mr, &send_req) != ncclSuccess)
      return ::testing::AssertionFailure() << "isend failed";
  }
  void* data[1] = {in.data()};
  int sizes[1] = {static_cast<int>(in.size())};
  int tags[1] = {0};
  void* mhandles[1] = {recv_mr};
  for (int i = 0; i < kPolls && recv_req == nullptr; ++i) {
    if (net.irecv(e.recv, 1, data, sizes, tags, mhandles, &recv_req) != ncclSuccess)
      return ::testing::AssertionFailure() << "irecv failed";
  }
  int sent = -1, received = -1;
  auto s = wait_done(net, send_req, &sent);
  if (!s) return s;
  auto r = wait_done(net, recv_req, &received);
  if (!r) return r;
  if (received != size) return ::testing::AssertionFailure() << "received " << received;
  for (int i = 0; i < size; ++i) {
    if (in[i] != out[i]) return ::testing::AssertionFailure() << "byte " << i << " differs";
  }
  if (net.dereg_mr(e.send, send_mr) != ncclSuccess || net.dereg_mr(e.recv, recv_mr) != ncclSuccess)
    return ::testing::AssertionFailure() << "deregMr failed";
  return ::testing::AssertionSuccess();
}

}  // namespace nccom::net::testing
