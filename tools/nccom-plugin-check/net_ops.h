// The Net's non-blocking operations driven to completion, each bounded by a
// deadline, with failures worded for the report. Shared by the driver and
// the peer, so both ends of every check behave alike.
#pragma once

#include "guard.h"
#include "net/net.h"
#include "outcome.h"

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace nccom::plugin_check {

// "<what> returned 3 (ncclInternalError)", plus the plugin's latest warning.
Failure nccl_failure(const std::string& what, ncclResult_t rc);
Expected<> expect_ok(ncclResult_t rc, const std::string& what);

// connect/accept until they hand out a comm ("not yet" is a NULL comm). The
// handle buffer is passed to every connect call: plugins may keep state in
// the caller's copy between calls. As in the host, the plugin's connect and
// accept run on helper threads (net::SetupCalls), so a plugin whose calls
// block (v4, or derived from NCCL's socket code) cannot hang the checker.
Expected<void*> poll_connect(net::Net& net, int dev, void* handle, const Deadline& deadline);
Expected<void*> poll_accept(net::Net& net, void* listen_comm, const Deadline& deadline);

// Whether the connect on `key` (a handle buffer) or the accept on it (a
// listen comm) is still inside the plugin after kBlockingGrace: the plugin
// blocks there until the other side comes.
inline constexpr std::chrono::milliseconds kBlockingGrace{200};
bool stays_inside(net::Net& net, const void* key);

// Calls `post` until it hands out a request: ncclSuccess with a NULL request
// is back-pressure and is retried (counted in *retries when given).
Expected<void*> post_retrying(const std::function<ncclResult_t(void**)>& post,
                              const Deadline& deadline, const std::string& what,
                              int* retries = nullptr);

// test() until done. Returns the size test reported, or -1 if it left the
// size unset (allowed for sends).
Expected<int> wait_request(net::Net& net, void* request, const Deadline& deadline,
                           const std::string& what);

std::string to_hex(const void* data, std::size_t size);
bool from_hex(const std::string& text, void* data, std::size_t size);

}  // namespace nccom::plugin_check

namespace nccom::plugin_check {

// The host's own binding (net::bind_library): "<kind>: <message>" on failure.
Expected<std::unique_ptr<net::Net>> bind_plugin(const std::string& path, net::Layout layout);

// Like the host, never unload a plugin that was initialised: it may still
// have threads, and a v4/v5 plugin may have registered exit handlers. The
// Net stays reachable (quiet leak checkers) until the process ends.
void keep_until_exit(std::unique_ptr<net::Net> net);

}  // namespace nccom::plugin_check
