// The socket plugin's lines: the SDK's logger (nccom/util/log.h, the host's
// logger given to init), subsystem NCCL_NET, tagged "NET/Socket : " as NCCL's
// socket transport tags its own.
#pragma once

#include <nccom/util/log.h>

#define SOCK_WARN(...) NCCOM_SDK_WARN("NET/Socket : " __VA_ARGS__)
#define SOCK_INFO(...) NCCOM_SDK_INFO(NCCOM_SUBSYS_NET, "NET/Socket : " __VA_ARGS__)
#define SOCK_TRACE(...) NCCOM_SDK_TRACE(NCCOM_SUBSYS_NET, "NET/Socket : " __VA_ARGS__)
