// Runs one communicator of `hosts` x `per_host` ranks as graph_rank_driver
// processes (rank r on emulated host r / per_host, device r % per_host) and
// returns every rank's key=value report; a rank that exits non-zero fails
// the calling test.
#pragma once

#include "child_process.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace graph_comm_test {

using Report = std::map<std::string, std::string>;

struct Launch {
  int hosts = 1;
  int per_host = 1;
  std::map<std::string, std::string> env;  // added to the common environment
  // Extra arguments of rank r (e.g. {"--expand", "mesh"}).
  std::function<std::vector<std::string>(int rank)> args;
  // Extra environment of rank r, over `env`.
  std::function<std::map<std::string, std::string>(int rank)> rank_env;
};

std::vector<Report> run_ranks(const Launch& launch);

// The same in steps, for tests that end or replace a rank's process: every
// rank started (rank 0 first; its unique id handed to the others).
struct Started {
  std::vector<nccom_test::RunningChild> children;  // indexed by rank; empty on failure
  std::string id_hex;
  std::map<std::string, std::string> env;
};
Started start_ranks(const Launch& launch);
// Starts another process as `rank` of the communicator `started` runs, with
// `args` and `env` added.
nccom_test::RunningChild start_rank(const Launch& launch, const Started& started, int rank,
                                    const std::vector<std::string>& args,
                                    const std::map<std::string, std::string>& env = {});

}  // namespace graph_comm_test
