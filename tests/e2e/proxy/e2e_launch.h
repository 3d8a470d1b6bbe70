// Starts the ranks of one communicator as e2e_rank_driver processes on
// emulated hosts (virtual_server_id = host, one rank per device) and
// collects their key=value reports.
#pragma once

#include "child_process.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace proxy_e2e_test {

using Report = std::map<std::string, std::string>;

struct Shape {
  int hosts;
  int per_host;
  int ranks() const { return hosts * per_host; }
};

// Starts every rank (rank 0 makes the id); `args` are the driver's
// key=value options. Fails the test (and returns what started) on error.
std::vector<nccom_test::RunningChild> start_ranks(
    Shape shape, const std::vector<std::string>& args,
    const std::map<std::string, std::string>& extra_env = {});

// Reads lines of `child` until one starts with `prefix`; returns the value
// after the prefix, or "" when the deadline passed or the child closed
// stdout (then *seen holds what it printed).
std::string wait_for(nccom_test::RunningChild& child, const std::string& prefix,
                     std::chrono::steady_clock::time_point deadline, std::string* seen);

// Starts the ranks, waits for all and checks each exited 0 with ok=1.
// Returns the reports.
std::vector<Report> run_ranks(Shape shape, const std::vector<std::string>& args,
                              const std::map<std::string, std::string>& extra_env = {});

}  // namespace proxy_e2e_test
