// The peer's command server (peer.h). One command at a time; each runs to
// completion within the tool's timeout and answers with one line.
#include "net/plugin_answers.h"
#include "net/setup_calls.h"
#include "net_ops.h"
#include "peer.h"
#include "plugin_log.h"
#include "transfer.h"

#include <map>
#include <sstream>
#include <thread>

namespace nccom::plugin_check {
namespace {

class Server {
 public:
  Server(net::Net& net, Channel& channel, std::chrono::milliseconds timeout)
      : net_(net), channel_(channel), timeout_(timeout) {}

  // The reply line to one command; sets *quit on "quit".
  std::string handle(const std::string& line, bool* quit) {
    std::istringstream in(line);
    std::string verb;
    in >> verb;
    take_last_warning();  // a warning from an earlier command is not this one's
    Expected<std::string> result = fail("unknown command '" + verb + "'");
    if (verb == "listen") result = listen(in);
    if (verb == "connect") result = connect(in);
    if (verb == "accept") result = accept(in);
    if (verb == "run") result = run(in);
    if (verb == "expose") result = expose(in);
    if (verb == "pump") result = pump(in);
    if (verb == "unexpose") result = unexpose(in);
    if (verb == "close") result = close(in);
    if (verb == "fini") result = ok_or(net_.fini(), "fini");
    if (verb == "quit") {
      *quit = true;
      result = std::string();
    }
    if (result) return result->empty() ? "ok" : "ok " + *result;
    return (result.error().timed_out ? "timeout " : "fail ") + result.error().reason;
  }

 private:
  enum class Kind { kListen, kSend, kRecv };
  struct Comm {
    void* comm = nullptr;
    Kind kind = Kind::kListen;
  };
  struct Exposed {
    std::unique_ptr<Arena> arena;
    void* comm = nullptr;
    void* mhandle = nullptr;
  };

  Deadline deadline() const { return Deadline(timeout_); }

  std::string add(void* comm, Kind kind) {
    comms_[next_id_] = Comm{comm, kind};
    return std::to_string(next_id_++);
  }

  Expected<Comm> find(std::istream& in) {
    int id = 0;
    in >> id;
    const auto it = comms_.find(id);
    if (it == comms_.end()) return fail("no comm " + std::to_string(id));
    return it->second;
  }

  Expected<std::string> listen(std::istream& in) {
    int dev = 0;
    in >> dev;
    unsigned char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
    void* comm = nullptr;
    auto ok = expect_ok(net_.listen(dev, handle, &comm), "listen");
    if (!ok) return ok.take_error();
    if (comm == nullptr) return fail("listen succeeded but handed out no listen comm");
    return add(comm, Kind::kListen) + " " + to_hex(handle, sizeof handle);
  }

  Expected<std::string> connect(std::istream& in) {
    int dev = 0;
    std::string hex;
    in >> dev >> hex;
    unsigned char handle[NCCL_NET_HANDLE_MAXSIZE];
    if (!from_hex(hex, handle, sizeof handle)) return fail("bad handle text");
    auto comm = poll_connect(net_, dev, handle, deadline());
    if (!comm) return comm.take_error();
    return add(*comm, Kind::kSend);
  }

  Expected<std::string> accept(std::istream& in) {
    auto listen = find(in);
    if (!listen) return listen.take_error();
    auto comm = poll_accept(net_, listen->comm, deadline());
    if (!comm) return comm.take_error();
    return add(*comm, Kind::kRecv);
  }

  // run <comm> send|recv <plan>
  Expected<std::string> run(std::istream& in) {
    auto comm = find(in);
    if (!comm) return comm.take_error();
    std::string role, rest;
    in >> role;
    std::getline(in, rest);
    auto plan = decode(rest);
    if (!plan) return plan.take_error();
    auto stats =
        run_plan(net_, comm->comm, role == "send" ? Role::kSend : Role::kRecv, *plan, deadline());
    if (!stats) return stats.take_error();
    return std::to_string(stats->back_pressure);
  }

  // expose <comm> <size> <key>: a registered pattern buffer for iread;
  // answers "<id> <address> <mr key>".
  Expected<std::string> expose(std::istream& in) {
    auto comm = find(in);
    if (!comm) return comm.take_error();
    std::size_t size = 0;
    uint32_t key = 0;
    in >> size >> key;
    Exposed e;
    e.arena = std::make_unique<Arena>(size);
    e.comm = comm->comm;
    fill_pattern(e.arena->data(), e.arena->size(), key);
    auto ok =
        expect_ok(net_.reg_mr(e.comm, e.arena->data(), e.arena->size(), NCCL_PTR_HOST, &e.mhandle),
                  "regMr of the buffer to be read");
    if (!ok) return ok.take_error();
    uint64_t mr_key = 0;
    ok = expect_ok(net_.get_mr_key(e.mhandle, &mr_key), "getMrKey");
    if (!ok) return ok.take_error();
    const auto address = reinterpret_cast<uintptr_t>(e.arena->data());
    exposed_[next_id_] = std::move(e);
    return std::to_string(next_id_++) + " " + std::to_string(address) + " " +
           std::to_string(mr_key);
  }

  // pump <comm> <tag>: keeps a send comm's endpoint progressing — on a
  // manual-progress provider an RMA that targets it moves only then — with
  // 4-byte sends one after another until "stop" arrives, then one 8-byte
  // send that ends the stream. Answers the number of 4-byte sends.
  Expected<std::string> pump(std::istream& in) {
    auto comm = find(in);
    if (!comm) return comm.take_error();
    int tag = 0;
    in >> tag;
    Arena arena(4096);
    fill_pattern(arena.data(), arena.size(), 601);
    void* mh = nullptr;
    auto ok =
        expect_ok(net_.reg_mr(comm->comm, arena.data(), arena.size(), NCCL_PTR_HOST, &mh), "regMr");
    if (!ok) return ok.take_error();
    const Deadline deadline = this->deadline();
    int count = 0, in_flight = 0;  // size of the send in flight, 0 for none
    bool stopping = false;
    void* request = nullptr;
    // Paced: progress is needed now and then, and a stream of unmatched
    // eager sends only fills the receiver's (and the provider's) buffers.
    auto next_send = std::chrono::steady_clock::now();
    for (;;) {
      if (in_flight == 0 && (stopping || std::chrono::steady_clock::now() >= next_send)) {
        const int size = stopping ? 8 : 4;
        const ncclResult_t rc = net_.isend(comm->comm, arena.data(), size, tag, mh, &request);
        if (rc != ncclSuccess) return nccl_failure("isend", rc);
        if (request != nullptr) in_flight = size;
      }
      if (in_flight != 0) {
        int done = 0;
        const ncclResult_t rc = net_.test(request, &done, nullptr);
        if (rc != ncclSuccess) return nccl_failure("test of a send", rc);
        if (done && in_flight == 8) break;
        if (done) {
          ++count;
          in_flight = 0;
          next_send = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
        }
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
      if (!stopping) {
        auto line = channel_.try_read_line();
        if (!line) return line.take_error();
        stopping = line->has_value() && **line == "stop";
      }
      if (deadline.expired()) {
        arena.leak();
        return timeout("the sends that keep the peer's endpoint progressing to complete");
      }
    }
    ok = expect_ok(net_.dereg_mr(comm->comm, mh), "deregMr");
    if (!ok) return ok.take_error();
    return std::to_string(count);
  }

  Expected<std::string> unexpose(std::istream& in) {
    int id = 0;
    in >> id;
    const auto it = exposed_.find(id);
    if (it == exposed_.end()) return fail("no exposed buffer " + std::to_string(id));
    auto ok = expect_ok(net_.dereg_mr(it->second.comm, it->second.mhandle), "deregMr");
    exposed_.erase(it);
    if (!ok) return ok.take_error();
    return std::string();
  }

  Expected<std::string> close(std::istream& in) {
    int id = 0;
    in >> id;
    const auto it = comms_.find(id);
    if (it == comms_.end()) return fail("no comm " + std::to_string(id));
    const Comm c = it->second;
    comms_.erase(it);
    switch (c.kind) {
      case Kind::kListen: return ok_or(net_.setup_calls().close_listen(c.comm), "closeListen");
      case Kind::kSend: return ok_or(net_.close_send(c.comm), "closeSend");
      case Kind::kRecv: return ok_or(net_.close_recv(c.comm), "closeRecv");
    }
    return std::string();
  }

  static Expected<std::string> ok_or(ncclResult_t rc, const char* what) {
    auto ok = expect_ok(rc, what);
    if (!ok) return ok.take_error();
    return std::string();
  }

  net::Net& net_;
  Channel& channel_;
  std::chrono::milliseconds timeout_;
  std::map<int, Comm> comms_;
  std::map<int, Exposed> exposed_;
  int next_id_ = 1;
};

}  // namespace

void serve(net::Net& net, Channel& channel, std::chrono::milliseconds timeout) {
  Server server(net, channel, timeout);
  bool quit = false;
  while (!quit) {
    auto line = channel.read_line(nullptr, "the next command");
    if (!line) return;  // the driver went away
    if (!channel.send_line(server.handle(*line, &quit))) return;
  }
}

int run_peer_process(const std::string& plugin, net::Layout layout, int fd,
                     std::chrono::milliseconds timeout) {
  Channel channel(fd);
  auto net = bind_plugin(plugin, layout);
  if (!net) {
    (void)channel.send_line("fail bind: " + net.error().reason);
    return 1;
  }
  auto ok = expect_ok((*net)->init(plugin_logger()), "init");
  int ndev = 0;
  if (ok) ok = expect_ok((*net)->devices(&ndev), "devices");
  if (ok && (ndev < 1 || ndev > net::kMaxNetDevices)) {
    ok = fail("devices reported " + std::to_string(ndev) + " devices, outside 1.." +
              std::to_string(net::kMaxNetDevices));
  }
  if (!ok) {
    keep_until_exit(std::move(net).value());
    (void)channel.send_line("fail " + ok.error().reason);
    return 1;
  }
  if (!channel.send_line("ok " + std::to_string(ndev))) return 1;
  serve(**net, channel, timeout);
  keep_until_exit(std::move(net).value());
  return 0;
}

}  // namespace nccom::plugin_check
