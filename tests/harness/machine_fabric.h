// What this machine's libfabric offers, asked of libfabric directly (never
// of the plugin under test): the probe behind the kLibfabricProvider skips.
//
// fi_getinfo runs in a process of its own (fabric_probe.cc): libfabric reads
// FI_PROVIDER once, at its first fi_getinfo in a process, and drops every
// other provider for the rest of that process's life; a probe in the test's
// process would fix that filter before the plugin's init sets it, or see
// only what an earlier case's filter let through.
#pragma once

#include <cstdint>
#include <string>

namespace nccom_test::machine {

// "" when libfabric offers an FI_EP_RDM endpoint of exactly `provider`
// ("shm", "tcp", the layered "tcp;ofi_rxm") with every bit of `caps`; else
// why not, naming the RDM providers it does offer. FI_PROVIDER is ignored.
// When the probe itself breaks, the test fails (ADD_FAILURE) and "" comes
// back: a broken probe is no reason to skip.
std::string libfabric_provider(const std::string& provider, uint64_t caps = 0);

// fi_version() of the libfabric this process loads, as "1.17".
std::string libfabric_version();
// fi_version() is at least major.minor.
bool libfabric_at_least(unsigned major, unsigned minor);

}  // namespace nccom_test::machine
