#include "net/bound_net.h"

#include "log/log.h"

#include <iterator>

namespace nccom::net {
namespace {

constexpr const char* kOpNames[] = {
    "init",      "fini",        "devices",     "getProperties", "listen", "connect",      "accept",
    "regMr",     "regMrDmaBuf", "deregMr",     "isend",         "irecv",  "iflush",       "test",
    "closeSend", "closeRecv",   "closeListen", "getMrKey",      "iwrite", "iwriteInline", "iread"};
static_assert(std::size(kOpNames) == static_cast<std::size_t>(Op::kCount));

// Bits of BoundNet::reported_: one per Op, then one per Refusal, then fini.
constexpr unsigned kOpBits = static_cast<unsigned>(Op::kCount);
constexpr unsigned kRefusalBits = 3;  // BoundNet::Refusal::kCount
constexpr unsigned kNoFiniBit = kOpBits + kRefusalBits;
static_assert(kNoFiniBit < 64);

}  // namespace

const char* op_name(Op op) {
  const auto i = static_cast<std::size_t>(op);
  return i < std::size(kOpNames) ? kOpNames[i] : "?";
}

const char* to_string(Layout layout) { return layout == Layout::kNvidia ? "nvidia" : "neuron"; }

std::string describe(const PluginInfo& info) {
  return info.name + " (" + (info.layout == Layout::kNvidia ? "NVIDIA" : "Neuron") + " ncclNet_v" +
         std::to_string(info.version) + ")";
}

BoundNet::BoundNet(PluginInfo info, unsigned capabilities,
                   std::unique_ptr<plugin::SharedLibrary> library)
    : Net(std::move(info), capabilities), library_(std::move(library)) {
  static_assert(static_cast<unsigned>(Refusal::kCount) == kRefusalBits);
}

bool BoundNet::first_time(unsigned bit) const {
  const std::uint64_t mask = std::uint64_t{1} << bit;
  return (reported_.fetch_or(mask, std::memory_order_relaxed) & mask) == 0;
}

ncclResult_t BoundNet::unsupported(Op op) const {
  if (first_time(static_cast<unsigned>(op))) {
    NCCOM_WARN("%s has no %s; the call fails with ncclInvalidUsage", describe(info()).c_str(),
               op_name(op));
  }
  return ncclInvalidUsage;
}

ncclResult_t BoundNet::refuse(Refusal kind, ncclResult_t code, const char* what) const {
  if (first_time(kOpBits + static_cast<unsigned>(kind))) {
    NCCOM_WARN("%s cannot %s; such calls fail with error %d", describe(info()).c_str(), what,
               static_cast<int>(code));
  }
  return code;
}

ncclResult_t BoundNet::no_fini(const char* why) const {
  if (first_time(kNoFiniBit)) {
    NCCOM_INFO(log::kNet | log::kInit, "NET/Plugin: %s has no fini to call (%s)",
               describe(info()).c_str(), why);
  }
  return ncclSuccess;
}

}  // namespace nccom::net
