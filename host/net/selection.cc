#include "net/selection.h"

#include "core/context.h"
#include "log/log.h"
#include "net/logger.h"
#include "net/nccl_result.h"
#include "net/plugin_answers.h"

#include <nccom/util/efa.h>

#include <strings.h>
#include <sys/utsname.h>

#include <atomic>
#include <mutex>

namespace nccom::net {
namespace {

// init then devices (plugin_answers.h: 1 .. kMaxNetDevices) and a look at
// each device's properties; the failure message when the plugin is not
// usable.
Result<int> start(Net& net, ncclDebugLogger_t logger) {
  const std::string name = describe(net.info()) + " from " + net.info().origin;
  ncclResult_t r = net.init(logger);
  if (r != ncclSuccess) {
    return make_error(NRT_FAILURE, "OFI plugin initNet() failed is EFA enabled? " + name +
                                       ": init returned " + result_text(r));
  }
  auto ndev = device_count(net);
  if (!ndev) {
    (void)net.fini();  // its init succeeded: let it release what it acquired
    return make_error(NRT_FAILURE,
                      "OFI plugin initNet() failed is EFA enabled? " + ndev.error().message);
  }
  warn_about_properties(net, *ndev);
  return *ndev;
}

// The process's net. Never destroyed: plugin threads and the runtime may
// still call in while static destructors run.
struct ProcessNet {
  std::mutex mutex;  // selection and finalisation
  std::mutex retired_mutex;
  bool attempted = false;
  Net* net = nullptr;
  Error failure;
  std::atomic<Net*> ready{nullptr};  // fast path for the data-path exports
  std::atomic<bool> finalized{false};
  std::vector<std::unique_ptr<Net>> retired;
};

ProcessNet& process() {
  static ProcessNet* state = new ProcessNet;
  return *state;
}

void check_kernel(const config::Config& config) {
  utsname name{};
  if (uname(&name) != 0) return;
  const std::string warning =
      fork_safe_warning(name.release, config.get_string("net.efa_fork_safe"));
  if (!warning.empty()) NCCOM_WARN("%s", warning.c_str());
}

// Use after neuronFiniPlugin: an error (logged here, where it is
// classified), never a call into a finalised plugin.
Error uninitialized() {
  Error e = make_error(NRT_UNINITIALIZED,
                       "NET/Plugin: the net plugin was finalised by neuronFiniPlugin and is not "
                       "selected again in this process");
  NCCOM_WARN("%s", e.message.c_str());
  return e;
}

}  // namespace

Result<Selection> select_from(std::vector<Candidate> candidates, ncclDebugLogger_t logger) {
  std::string tried;
  for (Candidate& candidate : candidates) {
    tried += (tried.empty() ? "" : "; ") + candidate.what;
    auto bound = candidate.bind();
    if (!bound) {
      NCCOM_WARN("NET/Plugin: cannot use %s: %s; trying the next candidate", candidate.what.c_str(),
                 bound.error().message.c_str());
      continue;
    }
    std::unique_ptr<Net> net = std::move(bound).value();
    if (candidate.probe) {
      if (Status probed = candidate.probe(*net); !probed) {
        NCCOM_WARN("NET/Plugin: cannot use %s: %s; trying the next candidate",
                   candidate.what.c_str(), probed.error().message.c_str());
        continue;  // nothing of it ran in this process: unload it
      }
    }
    if (candidate.prepare) {
      if (Status prepared = candidate.prepare(*net); !prepared) {
        // Settings the operator made for this plugin are wrong: using
        // another plugin instead would drop them without a word.
        if (prepared.error().status == NRT_INVALID) {
          NCCOM_WARN("NET/Plugin: cannot use %s: %s", candidate.what.c_str(),
                     prepared.error().message.c_str());
          return prepared.take_error();
        }
        NCCOM_WARN("NET/Plugin: cannot use %s: %s; trying the next candidate",
                   candidate.what.c_str(), prepared.error().message.c_str());
        continue;  // init never ran: nothing of it can still be running, unload it
      }
    }
    auto started = start(*net, logger);
    if (!started) {
      const std::string advice =
          candidate.if_it_fails.empty() ? "" : " (" + candidate.if_it_fails + ")";
      if (candidate.failure_expected.empty()) {
        NCCOM_WARN("%s; trying the next candidate%s", started.error().message.c_str(),
                   advice.c_str());
      } else {
        NCCOM_INFO(log::kNet | log::kInit, "%s; %s; trying the next candidate%s",
                   started.error().message.c_str(), candidate.failure_expected.c_str(),
                   advice.c_str());
      }
      retire(std::move(net));
      continue;
    }
    NCCOM_INFO(log::kNet | log::kInit, "NET/Plugin: using %s from %s with %d device(s) (%s)",
               describe(net->info()).c_str(), net->info().origin.c_str(), *started,
               candidate.reason.c_str());
    return Selection{std::move(net), *started, candidate.reason};
  }
  Error failure = make_error(
      NRT_FAILURE,
      "no usable net plugin" + (tried.empty() ? std::string(": there was no candidate")
                                              : " (tried " + tried + "); see the warnings above"));
  NCCOM_WARN("NET/Plugin: %s", failure.message.c_str());
  return failure;
}

std::string efa_absence(const std::string& mode, const std::string& source,
                        const std::string& class_dir) {
  if (strcasecmp(mode.c_str(), "yes") == 0) return "";
  if (strcasecmp(mode.c_str(), "no") == 0)
    return "expected here: net.efa is no (" + source + "), this host has no EFA device";
  if (!efa_device(class_dir).empty()) return "";
  return "expected here: this host has no EFA device (none under " + class_dir +
         " is bound to the efa driver; net.efa is auto)";
}

void retire(std::unique_ptr<Net> net) {
  ProcessNet& p = process();
  std::lock_guard lock(p.retired_mutex);
  p.retired.push_back(std::move(net));
}

Result<Net*> select() {
  ProcessNet& p = process();
  if (Net* net = p.ready.load(std::memory_order_acquire)) {
    if (!p.finalized.load(std::memory_order_acquire)) return net;
    return uninitialized();
  }
  std::lock_guard lock(p.mutex);
  if (p.finalized.load(std::memory_order_relaxed)) return uninitialized();
  if (!p.attempted) {
    p.attempted = true;
    auto context = core::Context::get();
    if (!context) {
      p.failure = context.error();
    } else {
      const config::Config& config = (*context)->config();
      check_kernel(config);
      auto candidates = process_candidates(config, (*context)->plugin_dirs());
      auto chosen = select_from(std::move(candidates), plugin_logger());
      if (chosen) {
        p.net = chosen->net.release();
        p.ready.store(p.net, std::memory_order_release);
      } else {
        p.failure = chosen.error();
      }
    }
  }
  if (p.net == nullptr) return p.failure;
  return p.net;
}

Status finalize() {
  ProcessNet& p = process();
  std::lock_guard lock(p.mutex);
  if (p.net == nullptr || p.finalized.load(std::memory_order_relaxed)) return {};
  p.finalized.store(true, std::memory_order_release);
  const ncclResult_t r = p.net->fini();
  if (r != ncclSuccess) {
    Error e = make_error(NRT_FAILURE, "NET/Plugin: fini of " + describe(p.net->info()) +
                                          " returned " + result_text(r));
    NCCOM_WARN("%s", e.message.c_str());
    return e;
  }
  NCCOM_INFO(log::kNet | log::kInit, "NET/Plugin: %s finalised", describe(p.net->info()).c_str());
  return {};
}

}  // namespace nccom::net
