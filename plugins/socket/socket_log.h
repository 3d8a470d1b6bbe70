// The socket plugin's lines: the SDK's logger (nccom/util/log.h, the host's
// logger given to init), subsystem NCCL_NET, tagged "NET/Socket : " as NCCL's
// socket transport tags its own.
#pragma once

#include <nccom/util/log.h>

// The tag, also the "who" of the boundary's guard (nccom/util/boundary.h),
// which puts a space between it and the slot.
#define SOCK_TAG "NET/Socket :"
#define SOCK_WARN(...) NCCOM_SDK_WARN(SOCK_TAG " " __VA_ARGS__)
#define SOCK_INFO(...) NCCOM_SDK_INFO(NCCOM_SUBSYS_NET, SOCK_TAG " " __VA_ARGS__)
#define SOCK_TRACE(...) NCCOM_SDK_TRACE(NCCOM_SUBSYS_NET, SOCK_TAG " " __VA_ARGS__)
