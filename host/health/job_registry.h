// The host's registry of nccom jobs, so that nccom-ras finds a job without
// being told its port (NCCL's RAS has one fixed port; nccom's jobs may each
// answer on their own: nccom-test picks a free one, a second job moves off a
// shared one).
//
// Every process that answers nccom-ras keeps one small file in the registry
// directory, named by its pid, saying where it answers, when it started and
// what it runs; it rewrites it when its port moves and removes it when its
// health service stops. A process that was killed leaves its file behind:
// readers check that the pid still runs the process that wrote it (its start
// time in /proc) and sweep the files that do not.
//
// The directory is NCCOM_RAS_REGISTRY when set ("none" turns the registry
// off), else nccom-ras-<uid> in $TMPDIR or /tmp; it is made 0700 and used only
// when it is a directory of this user, not a link.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nccom::health::registry {

// "" when the registry is off or its directory is unusable (`why` says why).
std::string directory(std::string* why = nullptr);

// Writes (or rewrites) this process's entry: it answers nccom-ras at
// `address` ("127.0.0.1:28028"). Returns "" or what went wrong.
std::string publish(const std::string& address);

// Removes this process's entry, if it wrote one.
void withdraw();

struct Entry {
  int pid = 0;
  std::string address;  // host:port
  std::string started;  // "2026-12-07 09:10:00", local time
  std::string command;  // its command line, cut at 200 characters
};

// The live entries of `dir`, by address then pid; entries of processes that
// are gone (or whose pid now runs another process) are removed when they
// belong to this user.
std::vector<Entry> live_entries(const std::string& dir);

}  // namespace nccom::health::registry
