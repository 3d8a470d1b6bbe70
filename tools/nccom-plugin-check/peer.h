// The other end of every connection the checks make.
//
// The peer is a command server: the driver sends it one line at a time
// ("listen 0", "accept 3", "run 4 recv <plan>", ...) and carries on with its
// own half of the check while the peer works; the reply says "ok ...",
// "fail <reason>" or "timeout <reason>". In-process the server is a thread
// sharing the driver's Net; with --two-process it is this executable again,
// started with the hidden option --peer FD, which binds and initialises the
// plugin itself. Either way the same code runs on both ends.
#pragma once

#include "channel.h"
#include "net/net.h"
#include "outcome.h"

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace nccom::plugin_check {

class Peer {
 public:
  static Expected<std::unique_ptr<Peer>> start_thread(net::Net& net,
                                                      std::chrono::milliseconds timeout);
  // `args` are this program's options for the child, after "--peer FD".
  static Expected<std::unique_ptr<Peer>> start_process(const std::vector<std::string>& args,
                                                       std::chrono::milliseconds timeout);
  ~Peer();

  // Sends a command; its reply is collected later with reply(). An answer
  // an earlier command left uncollected is read and dropped first.
  Expected<> send(const std::string& command);
  // The reply to the oldest unanswered command: the text after "ok".
  Expected<std::string> reply();
  Expected<std::string> call(const std::string& command);
  // A line for a command that is running (e.g. "stop" for "pump"): no reply
  // of its own.
  Expected<> signal(const std::string& line) { return channel_.send_line(line); }

  // Ends the peer. False when it did not answer (a thread stuck in a plugin
  // call, which can then only be abandoned with the process).
  bool stop();
  // "a thread" / "process 1234 (ready: 1 device)".
  const std::string& description() const { return description_; }

 private:
  Peer(int fd, std::chrono::milliseconds timeout) : channel_(fd), timeout_(timeout) {}
  std::string exit_status();

  Channel channel_;
  std::chrono::milliseconds timeout_;
  std::vector<std::string> pending_;  // commands sent and not yet answered
  std::thread thread_;
  int pid_ = -1;
  bool stopped_ = false;
  std::string description_;
};

// The peer's side: serves commands until "quit" or until the channel closes.
void serve(net::Net& net, Channel& channel, std::chrono::milliseconds timeout);

// main() of the --peer child: bind, init, devices, greet, serve.
int run_peer_process(const std::string& plugin, net::Layout layout, int fd,
                     std::chrono::milliseconds timeout);

}  // namespace nccom::plugin_check
