// Logging of the P2P transport: through the logger the host handed to init
// (plugins never print on their own); dropped before init or without one.
#pragma once

#include <nccom/plugin.h>

namespace nccom::p2p {

// NCCL_INIT subsystem bit: the channel lines are connection-setup lines.
inline constexpr unsigned long kLogSubsys = 1;

void set_logger(nccom_log_fn fn);
nccom_log_fn logger();

}  // namespace nccom::p2p

#define P2P_LOG(level, ...)                                                          \
  do {                                                                               \
    if (nccom_log_fn p2p_log_fn_ = ::nccom::p2p::logger(); p2p_log_fn_ != nullptr)   \
      p2p_log_fn_(level, ::nccom::p2p::kLogSubsys, __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)
#define P2P_INFO(...) P2P_LOG(NCCOM_LOG_LEVEL_INFO, __VA_ARGS__)
