// Logging of the NET_NEURON transport: everything goes through the logger the
// host handed to init (plugins never print on their own). Before init, or
// when the host gave none, messages are dropped.
#pragma once

#include <nccom/plugin.h>

namespace nccom::net_neuron {

// NCCL_NET subsystem bit: the transport's lines sit with the net plugin's.
inline constexpr unsigned long kLogSubsys = 16;

void set_logger(nccom_log_fn fn);
nccom_log_fn logger();

}  // namespace nccom::net_neuron

#define NN_LOG(level, ...)                                                                 \
  do {                                                                                     \
    if (nccom_log_fn nn_log_fn_ = ::nccom::net_neuron::logger(); nn_log_fn_ != nullptr)    \
      nn_log_fn_(level, ::nccom::net_neuron::kLogSubsys, __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)
#define NN_WARN(...) NN_LOG(NCCOM_LOG_LEVEL_WARN, __VA_ARGS__)
#define NN_INFO(...) NN_LOG(NCCOM_LOG_LEVEL_INFO, __VA_ARGS__)
#define NN_TRACE(...) NN_LOG(NCCOM_LOG_LEVEL_TRACE, __VA_ARGS__)
