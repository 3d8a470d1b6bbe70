// One side of a benchmark connection: a net plugin dlopen'ed and driven only
// through its ncclNet_v6 table (as the host and the runtime use it), one
// send comm and one recv comm to the peer process, and the out-of-band
// channel (a socketpair inherited from the parent) used to swap handles and
// to line the two sides up before each measurement.
#pragma once

#include <nccom/net_v6.h>

#include <cstddef>
#include <string>
#include <vector>

namespace nccom::bench {

struct LinkOptions {
  std::string plugin;       // path of the .so
  std::string device;       // preferred device name ("lo"); else device 0
  int oob_fd = -1;          // socketpair end shared with the peer
  size_t buffer_bytes = 0;  // registered send and receive buffers
  // The socket plugin's streams per comm (its configure, nccomNetConfig); 0 = its default.
  int nsocks_per_thread = 0;
  int nthreads = 0;
};

class Link {
 public:
  // Loads, initialises, connects both directions. Throws std::runtime_error
  // with what failed.
  explicit Link(const LinkOptions& options);
  ~Link();
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  const ncclNet_v6_t& net() const { return *net_; }
  const std::string& device_name() const { return device_name_; }
  const std::string& plugin_name() const { return plugin_name_; }

  // Posts, retrying NULL requests ("try again"), until the plugin takes it.
  void* isend(size_t size, int tag);
  void* irecv(size_t size, int tag);
  // Polls test() once; true when done (*size: the bytes test reported).
  // Throws on a failed request.
  bool test(void* request, int* size = nullptr);
  void wait(void* request, int* size = nullptr);

  // One `size`-byte message each way with a pattern that both sides check
  // (size and content): the figures are only worth something if the data
  // arrives. Throws on a mismatch.
  void verify(bool side_a, size_t size);

  // The out-of-band channel: exact reads and writes; throws on EOF/error.
  void oob_send(const void* data, size_t size);
  void oob_recv(void* data, size_t size);
  void barrier();  // both sides reach it before either leaves

 private:
  void check(ncclResult_t r, const char* what);

  void* library_ = nullptr;
  const ncclNet_v6_t* net_ = nullptr;
  int oob_ = -1;
  int dev_ = 0;
  std::string device_name_, plugin_name_;
  void* listen_ = nullptr;
  void* send_ = nullptr;
  void* recv_ = nullptr;
  std::vector<char> send_buf_, recv_buf_;
  void* send_mr_ = nullptr;
  void* recv_mr_ = nullptr;
};

}  // namespace nccom::bench
