#include "net_ops.h"

#include "net/bind.h"
#include "net/nccl_result.h"
#include "net/setup_calls.h"
#include "plugin_log.h"

#include <thread>
#include <vector>

namespace nccom::plugin_check {

Failure nccl_failure(const std::string& what, ncclResult_t rc) {
  std::string reason = what + " returned " + net::result_text(rc);
  const std::string said = take_last_warning();
  if (!said.empty()) reason += " (plugin: " + said + ")";
  return fail(reason);
}

Expected<> expect_ok(ncclResult_t rc, const std::string& what) {
  if (rc != ncclSuccess) return nccl_failure(what, rc);
  return {};
}

Expected<void*> poll_connect(net::Net& net, int dev, void* handle, const Deadline& deadline) {
  for (;;) {
    void* comm = nullptr;
    const ncclResult_t rc = net.setup_calls().connect(dev, handle, &comm);
    if (rc != ncclSuccess) return nccl_failure("connect", rc);
    if (comm != nullptr) return comm;
    if (deadline.expired()) return timeout("connect to hand out a send comm");
    std::this_thread::yield();
  }
}

Expected<void*> poll_accept(net::Net& net, void* listen_comm, const Deadline& deadline) {
  for (;;) {
    void* comm = nullptr;
    const ncclResult_t rc = net.setup_calls().accept(listen_comm, &comm);
    if (rc != ncclSuccess) return nccl_failure("accept", rc);
    if (comm != nullptr) return comm;
    if (deadline.expired()) return timeout("accept to hand out a recv comm");
    std::this_thread::yield();
  }
}

bool stays_inside(net::Net& net, const void* key) {
  const auto end = std::chrono::steady_clock::now() + kBlockingGrace;
  while (std::chrono::steady_clock::now() < end) {
    if (!net.setup_calls().running(key)) return false;
    std::this_thread::yield();
  }
  return net.setup_calls().running(key);
}

Expected<void*> post_retrying(const std::function<ncclResult_t(void**)>& post,
                              const Deadline& deadline, const std::string& what, int* retries) {
  for (;;) {
    void* request = nullptr;
    const ncclResult_t rc = post(&request);
    if (rc != ncclSuccess) return nccl_failure(what, rc);
    if (request != nullptr) return request;
    if (retries != nullptr) ++*retries;
    if (deadline.expired())
      return timeout(what + " to accept the request (it kept answering NULL)");
    std::this_thread::yield();
  }
}

Expected<int> wait_request(net::Net& net, void* request, const Deadline& deadline,
                           const std::string& what) {
  for (;;) {
    int done = 0;
    int size = -1;
    const ncclResult_t rc = net.test(request, &done, &size);
    if (rc != ncclSuccess) return nccl_failure("test of " + what, rc);
    if (done) return size;
    if (deadline.expired()) return timeout(what + " to complete");
    std::this_thread::yield();
  }
}

std::string to_hex(const void* data, std::size_t size) {
  static const char kDigits[] = "0123456789abcdef";
  const auto* bytes = static_cast<const unsigned char*>(data);
  std::string text;
  text.reserve(size * 2);
  for (std::size_t i = 0; i < size; ++i) {
    text.push_back(kDigits[bytes[i] >> 4]);
    text.push_back(kDigits[bytes[i] & 0xf]);
  }
  return text;
}

bool from_hex(const std::string& text, void* data, std::size_t size) {
  if (text.size() != size * 2) return false;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  auto* bytes = static_cast<unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) {
    const int hi = nibble(text[2 * i]);
    const int lo = nibble(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    bytes[i] = static_cast<unsigned char>(hi << 4 | lo);
  }
  return true;
}

Expected<std::unique_ptr<net::Net>> bind_plugin(const std::string& path, net::Layout layout) {
  auto library = plugin::SharedLibrary::open(path);
  if (!library) {
    const plugin::LoadError& e = library.error();
    return fail(std::string(plugin::to_string(e.kind)) + ": " + e.message);
  }
  auto bound = net::bind_library(std::move(library).value(), layout, "nccom-plugin-check");
  if (!bound) {
    const plugin::LoadError& e = bound.error();
    return fail(std::string(plugin::to_string(e.kind)) + ": " + e.message);
  }
  return std::move(bound).value();
}

void keep_until_exit(std::unique_ptr<net::Net> net) {
  // Never destroyed, so its contents stay reachable until the very end.
  static auto* kept = new std::vector<net::Net*>;  // only the main thread gets here
  if (net != nullptr) kept->push_back(net.release());
}

}  // namespace nccom::plugin_check
