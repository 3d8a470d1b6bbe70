#include "net/plugin_answers.h"

#include "log/log.h"
#include "net/nccl_result.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace nccom::net {
namespace {

std::string who(const Net& net) { return describe(net.info()) + " from " + net.info().origin; }

// One WARN when `text` cannot be read or is not terminated within `max_bytes`.
void warn_about_text(const Net& net, int dev, const char* field, const char* text,
                     std::size_t max_bytes) {
  if (text == nullptr) return;
  const ReadText read = readable_text(text, max_bytes);
  if (!read.readable) {
    NCCOM_WARN(
        "NET/Plugin: %s: getProperties(%d) returned a %s pointer (%p) this process cannot "
        "read; nccom uses \"\" (the plugin is broken: fix it or choose another with net.plugin)",
        who(net).c_str(), dev, field, static_cast<const void*>(text));
  } else if (!read.terminated) {
    NCCOM_WARN(
        "NET/Plugin: %s: getProperties(%d) returned a %s that is not NUL-terminated within "
        "%zu bytes; nccom uses its first %zu bytes (the plugin should fix the string)",
        who(net).c_str(), dev, field, read.text.size(), read.text.size());
  }
}

// Bytes from `at` to the end of its page: a read never crosses into a page
// that may not be mapped before the bytes before it were looked at.
std::size_t to_page_end(const char* at) {
  static const std::size_t page = [] {
    const long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? static_cast<std::size_t>(p) : std::size_t{4096};
  }();
  return page - reinterpret_cast<std::uintptr_t>(at) % page;
}

}  // namespace

ReadText readable_text(const char* text, std::size_t max_bytes) {
  ReadText out;
  if (text == nullptr || max_bytes == 0) return out;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return out;  // no pipe: nothing is read, nothing trusted
  const char* at = text;
  while (out.text.size() < max_bytes && !out.terminated) {
    // The kernel tells whether the page holding `at` can be read (one byte
    // through the pipe: EFAULT if not); the rest of that page then can be,
    // and is read in place, up to the NUL and no further.
    char probe;
    ssize_t wrote;
    do {
      wrote = write(fds[1], at, 1);
    } while (wrote < 0 && errno == EINTR);
    if (wrote != 1) break;
    if (read(fds[0], &probe, 1) != 1) break;
    out.readable = true;
    const std::size_t span = std::min(to_page_end(at), max_bytes - out.text.size());
    const std::size_t len = strnlen(at, span);
    out.text.append(at, len);
    out.terminated = len < span;
    at += len;
  }
  close(fds[0]);
  close(fds[1]);
  return out;
}

std::string bounded_text(const char* text, std::size_t max_bytes) {
  return readable_text(text, max_bytes).text;
}

Result<int> device_count(Net& net) {
  int ndev = 0;
  const ncclResult_t r = net.devices(&ndev);
  if (r != ncclSuccess) {
    return make_error(NRT_FAILURE, who(net) + ": devices() returned " + result_text(r));
  }
  if (ndev < 1) {
    return make_error(NRT_FAILURE, who(net) + ": devices() reported " + std::to_string(ndev) +
                                       " devices; a usable net plugin has at least 1");
  }
  if (ndev > kMaxNetDevices) {
    return make_error(NRT_FAILURE, who(net) + ": devices() reported " + std::to_string(ndev) +
                                       " devices, more than the " + std::to_string(kMaxNetDevices) +
                                       " nccom accepts (kMaxNetDevices); the plugin is broken: "
                                       "fix it or choose another with net.plugin");
  }
  return ndev;
}

std::string clamp_properties(ncclNetProperties_v6_t& props) {
  const int given = props.maxRecvs;
  if (given >= 1 && given <= kMaxNetRecvs) return {};
  props.maxRecvs = given < 1 ? 1 : kMaxNetRecvs;
  return "maxRecvs " + std::to_string(given) + " is outside 1.." + std::to_string(kMaxNetRecvs) +
         "; " + std::to_string(props.maxRecvs) + " is used";
}

void warn_about_properties(Net& net, int devices) {
  for (int dev = 0; dev < devices; ++dev) {
    ncclNetProperties_v6_t props{};
    if (net.get_properties(dev, &props) != ncclSuccess) continue;
    warn_about_text(net, dev, "name", props.name, kMaxNetNameBytes);
    warn_about_text(net, dev, "pciPath", props.pciPath, kMaxNetPathBytes);
    const std::string clamped = clamp_properties(props);
    if (!clamped.empty()) {
      NCCOM_WARN(
          "NET/Plugin: %s: getProperties(%d): %s (nccom posts one receive per irecv; "
          "transports are handed the clamped value)",
          who(net).c_str(), dev, clamped.c_str());
    }
  }
}

}  // namespace nccom::net
