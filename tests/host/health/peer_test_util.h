// What the health engine's socket-level tests share: frames read and
// written as a raw peer does, the engine's WARN lines caught (and its thread
// held still), and the cards, listeners and stalled streams they set up.
#pragma once

#include "bootstrap/socket.h"
#include "health/engine.h"
#include "health/state.h"
#include "health/wire.h"

#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace nccom::health::peer_test {

using bootstrap::Socket;
using bootstrap::SocketAddress;
using Clock = std::chrono::steady_clock;

inline bool read_exactly(int fd, uint8_t* out, std::size_t n) {
  std::size_t got = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (got < n && Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const ssize_t r = ::recv(fd, out + got, n - got, 0);
    if (r <= 0) return false;
    got += static_cast<std::size_t>(r);
  }
  return got == n;
}

// Frames from `fd` until one of `type` (returned with its payload) or 5 s.
inline std::optional<std::vector<uint8_t>> next_frame_of(int fd, FrameType type) {
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (Clock::now() < deadline) {
    uint8_t head[kFrameHeaderBytes];
    if (!read_exactly(fd, head, sizeof head)) return std::nullopt;
    auto h = decode_header(head, sizeof head);
    if (!h) return std::nullopt;
    std::vector<uint8_t> payload(h->length);
    if (h->length > 0 && !read_exactly(fd, payload.data(), payload.size())) return std::nullopt;
    if (h->type == type) return payload;
  }
  return std::nullopt;
}

// The engine's WARN lines, and a way to hold its thread still: the WARN
// sink runs on the engine's thread, so a line that names `freeze_on` parks
// that thread, outside its poll, until the test lets it go.
struct WarnGate {
  std::mutex mu;
  std::condition_variable cv;
  std::string freeze_on;
  bool frozen = false;
  bool go = false;
  std::vector<std::string> lines;

  void reset(std::string freeze) {  // with `mu` held
    freeze_on = std::move(freeze);
    frozen = go = false;
    lines.clear();
  }
};
inline WarnGate g_gate;

inline void gate_sink(const char* line, std::size_t length) {
  std::unique_lock lock(g_gate.mu);
  g_gate.lines.emplace_back(line, length);
  g_gate.cv.notify_all();
  if (g_gate.freeze_on.empty() || g_gate.lines.back().find(g_gate.freeze_on) == std::string::npos)
    return;
  g_gate.frozen = true;
  g_gate.cv.notify_all();
  g_gate.cv.wait_for(lock, std::chrono::seconds(10), [] { return g_gate.go; });
}

inline bool send_all(int fd, const std::vector<uint8_t>& bytes) {
  return ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
}

// The first WARN line that has `text`, or nothing. The bound only ends a
// hang: every caller expects the line, at most a few seconds away.
inline std::optional<std::string> warned(const std::string& text) {
  std::unique_lock lock(g_gate.mu);
  std::optional<std::string> found;
  g_gate.cv.wait_for(lock, std::chrono::seconds(30), [&] {
    for (const std::string& line : g_gate.lines) {
      if (line.find(text) != std::string::npos) found = line;
    }
    return found.has_value();
  });
  return found;
}

// A non-blocking listener on 127.0.0.1 (an ephemeral port), as the engine
// takes its peer port.
inline std::optional<Socket> engine_listener() {
  auto at = SocketAddress::parse("127.0.0.1:1");
  if (!at) return std::nullopt;
  at->set_port(0);
  auto listener = Socket::listen(*at);
  if (!listener || !engine::set_nonblocking(listener->fd())) return std::nullopt;
  return std::move(*listener);
}

// A process's health card: its service listens at `at`.
inline Card card_at(uint64_t process, uint32_t pid, const SocketAddress& at,
                    const std::string& host) {
  Card c;
  c.service = true;
  c.pid = pid;
  c.process = process;
  c.endpoint = at;
  c.host = host;
  return c;
}

// Stream 0 of `comm` runs an execution that has not moved since now and
// waits on rank `peer`, as the proxy's scheduler publishes it.
inline void stall(CommRecord& comm, int peer) {
  StreamProgress& sp = comm.stream(0);
  sp.waiting_peer = peer;
  sp.waiting_known = true;
  sp.started = 1;
  sp.last_progress_ms = now_ms();
  sp.running = true;
}

// The failure the engine set on stream 0 of `comm`, if any.
inline std::optional<std::string> verdict_of(CommRecord& comm) {
  StreamProgress& sp = comm.stream(0);
  if (!sp.has_verdict.load(std::memory_order_acquire)) return std::nullopt;
  std::lock_guard lock(sp.mu);
  return sp.verdict.text;
}

}  // namespace nccom::health::peer_test
