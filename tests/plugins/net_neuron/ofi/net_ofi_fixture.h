// Shared support for the NetOfi* suites: the plugin loaded with dlopen (as
// the runtime loads libnccom-net.so) and driven only through its tables, a
// logger that captures what the plugin says, and a fixture per provider.
//
// libfabric reads FI_PROVIDER once, at its own init in the process; ctest
// runs every test case in its own process, so each case sets FI_PROVIDER in
// SetUp before the plugin's init.
#pragma once

#include "build_paths.h"
#include "machine.h"

#include <nccom/net_v4.h>
#include <nccom/net_v5.h>
#include <nccom/net_v6.h>

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace net_ofi_test {

struct PluginTables {
  void* library = nullptr;
  const ncclNet_v6_t* v6 = nullptr;
  const ncclNet_v5_t* v5 = nullptr;
  const ncclNet_v4_t* v4 = nullptr;
  // nccomNetConfig's configure() as the host calls it, with only the rails
  // or only the liveness settings given (the others take their defaults).
  std::function<ncclResult_t(int rails)> configure;
  std::function<ncclResult_t(int enabled, int check_ms, int grace_ms)> configure_liveness;
};

// The plugin's liveness defaults (docs/internals/net-ofi.md, "Peer liveness");
// TearDown restores them.
constexpr int kLivenessCheckMs = 100;
constexpr int kLivenessGraceMs = 500;

// dlopen(NET_OFI_PLUGIN) once per process; fails the test if it cannot.
const PluginTables& plugin();

// ---- the logger handed to init ------------------------------------------------
void capture_logger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line,
                    const char* fmt, ...);
std::string captured_logs();
bool logs_contain(const std::string& text);
void clear_logs();
// The provider named by "Selected provider is X, fabric ...", or "".
std::string selected_provider();

// ---- process resources ---------------------------------------------------------------
int open_fd_count();
int thread_count();

// ---- driving requests ------------------------------------------------------------------
struct Pending {
  void* request = nullptr;
  bool done = false;
  int size = -1;
  ncclResult_t rc = ncclSuccess;
};
// test() every pending request until all are done or failed; false on timeout.
bool wait_all(const ncclNet_v6_t* net, std::vector<Pending*> pending,
              std::chrono::milliseconds timeout = std::chrono::seconds(20));

struct CommPair {
  void* listen = nullptr;
  void* send = nullptr;
  void* recv = nullptr;
};

// A fixture per provider: init with FI_PROVIDER=GetParam(), fini afterwards.
// SetUp skips when this machine's libfabric has no such provider (asked of
// libfabric directly: machine_fabric.h), and fails when it has one and the
// plugin cannot init over it or selects another.
class NetOfiProvider : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override;
  void TearDown() override;

  // listen on dev, then call connect and accept alternately until both
  // return a comm (non-blocking: both may return NULL first).
  CommPair connect_pair(int dev = 0);
  void close_pair(CommPair& pair);
  // One message: isend + irecv + test both; returns the receive size.
  int send_recv(const CommPair& pair, void* sbuf, int ssize, void* smh, void* rbuf, int rsize,
                void* rmh, int tag);
  // "" when libfabric offers this provider with RMA (reads and writes, both
  // directions; asked of libfabric, not of the plugin), else why not.
  std::string machine_lacks_rma() const;

  const ncclNet_v6_t* net = nullptr;
  int ndev = 0;
  ncclNetProperties_v6_t props{};
  bool initialized_ = false;
};

std::string provider_test_name(const ::testing::TestParamInfo<std::string>& info);

}  // namespace net_ofi_test
