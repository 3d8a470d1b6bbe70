// Helpers shared by the files of host/log; not part of the logger's interface.
#pragma once

namespace nccom::log::detail {

// This host's name up to the first '.', as NCCL prints it and as %h expands.
// Computed once; the storage is trivially destructible, so lines logged from
// atexit handlers or late static destructors still see it.
const char* short_hostname();

}  // namespace nccom::log::detail
