// libfabric's shm provider keeps each endpoint's queues in a file of
// /dev/shm that it sizes with ftruncate and touches as it goes. A tmpfs
// allocates a page at its first touch: when /dev/shm has no room left by
// then, the touching process gets SIGBUS, wherever it is. The plugin makes
// the provider's regions safe to touch:
//
//   - before an shm endpoint is enabled, /dev/shm must have room for a
//     region (the size of the last one this process made; 16 MiB before
//     the first), else the endpoint fails, naming /dev/shm and the bytes;
//   - once enabled, the region is reserved whole (posix_fallocate), so a
//     /dev/shm that fills up later cannot fault it;
//   - the first shm endpoint of a process removes the regions that dead
//     processes left (their names are ours, "nc<pid>.<n>", the pid in hex).
#pragma once

#include "common.h"

#include <string>

namespace nccom::ofi::shm_room {

// The file in `dir` (normally /dev/shm) that holds the region of the
// endpoint named `fi_name` ("fi_shm://nc<pid>.<n>"); "" for a name of
// another form.
std::string region_file(const std::string& fi_name, const std::string& dir = "/dev/shm");

// ncclSuccess when `dir` has room for one more region; else an OFI_WARN
// naming the directory, the bytes wanted and the bytes free.
Status check_room(const std::string& dir = "/dev/shm");

// Reserves every byte of the region file `path` (after fi_enable made it).
// A file that is not there (a provider that names its regions otherwise)
// is left to the provider, with an INFO line.
Status reserve(const std::string& path);

// "<free> free of <size>" for `dir`, or why it cannot be read.
std::string room_text(const std::string& dir = "/dev/shm");

// Removes, once per process, the region files in `dir` whose pid names no
// running process and that this user owns. Returns how many it removed.
int sweep_dead(const std::string& dir = "/dev/shm");

}  // namespace nccom::ofi::shm_room
